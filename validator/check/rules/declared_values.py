"""NET007 declared-values: Declared counts, ports and tapers are honoured."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def declared_values(ctx: Context) -> Iterator[Hit]:
    """A value the design declares (a count, a port number, a pod size, a taper) is honoured or
    reported, never quietly replaced by a different fabric.

    Source: clusterplan design policy (a cabling plan must be the fabric the design says).
    Fix: change the declared value as the message says, or remove it so clusterplan sizes the tier.
    Example:
        fabrics: {compute: {tiers: {leaf: {downlinks: 32, uplinks: 16, oversubscription: "1:1"}}}}   # 2:1 is not 1:1
    """
    for problem in ctx.problems("NET007"):
        yield Hit(f"{problem.path[1]}: {problem.message}", problem.path)


RULE = Rule("NET007", "declared-values", "Declared counts, ports and tapers are honoured", "error", "all",
            declared_values, waivable=False)
