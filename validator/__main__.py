from validator.cli import main

main()
