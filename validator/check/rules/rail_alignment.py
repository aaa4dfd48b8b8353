"""TRN007 rail-alignment: NIC i on the rail-i leaf."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def rail_alignment(ctx: Context) -> Iterator[Hit]:
    """In a rail-optimized fabric NIC i of every server lands on the rail-i leaf, so same-rank GPUs of
    different servers are one hop apart.

    Source: DGX SuperPOD RA "Compute Fabric" (rail-aligned SUs); Juniper JVD rail-optimized design.
    Fix: cable NIC i to rail i (remove `nic_to_rail` or make it 0, 1, 2, ...).
    Example:
        fabrics: {compute: {topology: rail-optimized, nic_to_rail: [0, 1, 2, 3, 4, 5, 7, 6]}}
    """
    for name, fab in ctx.design.fabrics:
        if fab is None or fab.topology != "rail-optimized" or fab.nic_to_rail is None:
            continue
        for i, rail in enumerate(fab.nic_to_rail):
            if rail != i:
                yield Hit(f"NIC {i} is cabled to rail {rail}; a rail-optimized fabric puts NIC {i} on rail {i}",
                          ("fabrics", name, "nic_to_rail", i))


RULE = Rule("TRN007", "rail-alignment", "NIC i on the rail-i leaf", "error", "training", rail_alignment)
