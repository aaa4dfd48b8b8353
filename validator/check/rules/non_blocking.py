"""TRN002 non-blocking: 1:1 non-blocking training fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def non_blocking(ctx: Context) -> Iterator[Hit]:
    """Every tier of a training compute fabric is 1:1 (non-blocking): the bandwidth a switch takes in
    from below is at most what it can send up, computed per tier from the real ports and speeds of the
    expanded topology. A taper the design declares at a tier (a zone's aggregation tier) is reported
    as what it is, a taper at that tier, and can be waived.

    Source: NVIDIA DGX SuperPOD RA for DGX H100, Network Fabrics ("balanced, full-fat tree"); Llama 3
    paper (arXiv 2407.21783) section 3.3.1 (full
    bisection inside a 3,072-GPU pod, 1:7 above it, with a topology-aware scheduler).
    Fix: give the tier more uplinks (or fewer downlinks), remove the explicit port counts so
    clusterplan sizes the tier, or waive the finding for a deliberate taper (say why).
    Example:
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800, downlinks: 96, uplinks: 32}}}}   # 3:1
    """
    fab = ctx.topology.fabrics.get("compute")
    if fab is None:
        return
    for tier in fab.tiers:
        ratio = tier.ratio
        if ratio <= 1 + 1e-9:
            continue
        ports = (f"{tier.down_ports} x {tier.down_speed_gbps:g}G down, {tier.up_ports} x {tier.up_speed_gbps:g}G up "
                 f"= {ratio:.3g}:1")
        if tier.taper_declared and tier.taper > 1:
            yield Hit(f"{tier.role} {tier.switch.id}: tapered {ratio:.3g}:1 as declared ({ports}); traffic "
                      "across this tier runs below full bisection", (*tier.path, "oversubscription"))
        else:
            yield Hit(f"{tier.role} {tier.switch.id}: {ports}; a training fabric must be 1:1", tier.path)


RULE = Rule("TRN002", "non-blocking", "1:1 non-blocking training fabric", "error", "training", non_blocking)
