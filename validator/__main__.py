from validator.commands import main

main()
