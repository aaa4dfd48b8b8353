"""The engineering rules. `registry.RULES` lists every rule explicitly."""
