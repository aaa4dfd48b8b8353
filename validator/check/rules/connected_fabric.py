"""NET008 connected-fabric: Every leaf reaches every other."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def connected_fabric(ctx: Context) -> Iterator[Hit]:
    """Every leaf of a fabric can reach every other: a fabric with more than one leaf per rail and no spine
    is a set of islands. One leaf per rail is connected through the servers, which reach every rail (a
    rail-only or rail-optimized fabric in one rack, a 4-node DGX BasePOD's two leaves with every node on
    both): traffic between rails crosses NVLink inside the server. Out-of-band leaves without a spine tier
    are uplinked to the site's management router, outside the design.

    Source: a Clos fabric joins its leaves through the tier above (RFC 7938 section 3); rail-only
    networks leave the rails apart by design (Wang et al., "How to Build Low-cost Networks for Large
    Language Models (without Sacrificing Performance)", 2023).
    Fix: add a spine tier, or a leaf with enough ports for every endpoint of its rail.
    Example:
        compute: {server: dgx-h200, count: 32}   # 256 links: 2 leaves of 128 ports
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800}, spine: null}}}   # and no spine
    """
    for name, fab in ctx.topology.fabrics.items():
        if len(fab.tiers) > 1 or not fab.buildable or name == "oob":
            continue
        leaves, rails = fab.plane.leaves, fab.plane.rails
        if leaves > rails:
            scope = "per rail" if fab.topology == "rail-only" else "per plane" if fab.planes > 1 else ""
            of = f" for {rails} rails" if rails > 1 else ""
            yield Hit(f"{name}: {leaves} leaves {scope}{of} and no spine: leaves of one rail are not connected to "
                      "each other".replace("  ", " "), ("fabrics", name, "tiers"))


RULE = Rule("NET008", "connected-fabric", "Every leaf reaches every other", "error", "all", connected_fabric)
