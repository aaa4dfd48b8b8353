"""NET008 connected-fabric: Every leaf reaches every other."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def connected_fabric(ctx: Context) -> Iterator[Hit]:
    """Every leaf of a fabric can reach every other: a fabric with more than one leaf and no spine is a
    set of islands (a rail-only fabric may leave its rails apart, but not the leaves of one rail).

    Source: a Clos fabric joins its leaves through the tier above (RFC 7938 section 3).
    Fix: add a spine tier, or a leaf with enough ports for every endpoint.
    Example:
        compute: {server: dgx-h200, count: 32}   # 256 links: 2 leaves of 128 ports
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800}, spine: null}}}   # and no spine
    """
    for name, fab in ctx.topology.fabrics.items():
        if len(fab.tiers) > 1 or not fab.buildable:
            continue
        leaves = fab.plane.leaves
        if leaves > 1:
            scope = "per rail" if fab.topology == "rail-only" else "per plane" if fab.planes > 1 else ""
            yield Hit(f"{name}: {leaves} leaves {scope} and no spine: they are not connected to each other".replace(
                "  ", " "), ("fabrics", name, "tiers"))


RULE = Rule("NET008", "connected-fabric", "Every leaf reaches every other", "error", "all", connected_fabric)
