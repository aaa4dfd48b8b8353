from validator.commands import run

run()
