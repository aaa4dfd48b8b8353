"""Stage 6: the engineering rules. `registry.RULES` lists every rule explicitly."""
