"""NET001 switch-radix: Ports used within switch radix."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def switch_radix(ctx: Context) -> Iterator[Hit]:
    """No switch carries more links than it has ports at their speeds (cages and breakouts counted):
    the sizing reports a declared count or port number that cannot hold the fabric. The link plan never
    puts more links on a switch than its tier reserves, so what the rule reports is what sizing found.

    Source: switch hardware manuals in the catalog (port groups, cages and breakouts).
    Fix: add switches to the tier (or remove its explicit count so clusterplan sizes it).
    Example:
        compute: {server: dgx-h200, count: 32}
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800, count: 1}}}}   # 256 server links, 128 ports
    """
    # the link plan within each tier's ports is an invariant (tests/invariants.py, run by test_port_truth.py)
    for problem in ctx.problems("NET001"):
        yield Hit(f"{problem.path[1]}: {problem.message}", problem.path)


RULE = Rule("NET001", "switch-radix", "Ports used within switch radix", "error", "all", switch_radix, waivable=False)
