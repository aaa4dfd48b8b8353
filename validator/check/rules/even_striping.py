"""NET006 even-striping: Every switch pair carries the same number of links."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def even_striping(ctx: Context) -> Iterator[Hit]:
    """Every switch pair between two tiers carries the same number of links: uneven striping leaves
    some spines (or cores) carrying more of the traffic than others, so the fabric is not the
    non-blocking fabric its port counts suggest.

    Source: shared/docs/fabric-shapes.md section 1 (even striping; VMware leaf-spine design guide;
    the DGX SuperPOD RAs size spines to a divisor of the leaf uplinks: 16 spines for 3 SU, 18 for 4 SU
    of B300 XDR).
    Fix: remove the explicit spine (or core) count so clusterplan picks a divisor of the uplinks, or
    choose a count that divides the uplinks of each switch below.
    Example:
        fabrics: {compute: {tiers: {spine: {switch: sonic-th5-64x800, count: 12}}}}   # 64 uplinks per leaf over 12
    """
    for problem in ctx.problems("NET006"):
        yield Hit(f"{problem.path[1]} {problem.message}", problem.path)


RULE = Rule("NET006", "even-striping", "Every switch pair carries the same number of links", "error", "all",
            even_striping)
