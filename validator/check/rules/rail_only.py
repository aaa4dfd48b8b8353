"""NET010 rail-only-traffic: a rail-only fabric carries no cross-rail traffic; NVLink must."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def rail_only(ctx: Context) -> Iterator[Hit]:
    """A rail-only fabric joins only same-rank GPUs of different NVLink domains: traffic between rails is
    forwarded through the NVLink domain (NCCL PXN), and MoE all-to-all pays for that forwarding (8-11 %
    more completion time in Wang et al.). The fabric is cheaper; the job layout must keep to it.

    Source: Wang et al., "Rail-only: A Low-Cost High-Performance Network for Training LLMs with Trillion
    Parameters", arXiv 2307.12169 (38-77 % lower network cost; MoE all-to-all 8.2-11.2 % slower);
    Juniper JVD "Rail Optimized Fabric" (PXN).
    Fix: keep it and make sure the framework forwards cross-rail traffic over NVLink (NCCL PXN), or add a
    spine tier (`topology: rail-optimized`) if jobs need any-to-any traffic across rails.
    Example:
        fabrics: {compute: {topology: rail-only, tiers: {leaf: {switch: sonic-th5-64x800}}}}
    """
    for name, fab in ctx.topology.fabrics.items():
        if fab.topology == "rail-only":
            domain = ctx.resolved.nvlink_domain_gpus
            yield Hit(f"{name} is rail-only: {fab.planes} rails never meet; cross-rail traffic must ride the "
                      f"{domain}-GPU NVLink domain (NCCL PXN)", ("fabrics", name, "topology"))


RULE = Rule("NET010", "rail-only-traffic", "Rail-only fabrics rely on NVLink for cross-rail traffic", "info",
            "all", rail_only)
