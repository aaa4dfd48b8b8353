"""One module per engineering rule: the check function, its docstring (rationale, source, fix, example) and
its metadata (`RULE`) side by side, as KICS and yamllint keep theirs. `validator.check.registry` lists them."""
