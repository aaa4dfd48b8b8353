"""NET006 even-striping: Every switch pair carries the same number of links."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def even_striping(ctx: Context) -> Iterator[Hit]:
    """Every switch pair between two tiers carries the same number of links: uneven striping leaves
    some spines (or cores) carrying more of the traffic than others, so the fabric is not the
    non-blocking fabric its port counts suggest.

    Source: NVIDIA DGX SuperPOD RA for DGX H100, Network Fabrics, table 4 (16 spines for 3 SU: the 32
    leaf uplinks divide evenly);
    VMware Validated Design 4.0, leaf-spine: equal uplinks to every spine avoid hotspots.
    Fix: remove the explicit spine (or core) count so clusterplan picks a divisor of the uplinks, or
    choose a count that divides the uplinks of each switch below.
    Example:
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800, uplinks: 64},
                                    spine: {switch: sonic-th5-64x800, count: 12}}}}   # 64 uplinks per leaf over 12
    """
    for problem in ctx.problems("NET006"):
        yield Hit(f"{problem.path[1]} {problem.message}", problem.path)


RULE = Rule("NET006", "even-striping", "Every switch pair carries the same number of links", "error", "all",
            even_striping)
