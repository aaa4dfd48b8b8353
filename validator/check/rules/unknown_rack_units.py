"""FAC004 unknown-rack-units: every device's height is known, so rack space is checked, not guessed."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def unknown_rack_units(ctx: Context) -> Iterator[Hit]:
    """A switch whose rack units the catalog does not give cannot be placed by height: clusterplan stands
    each such switch in a network rack of its own and says so, rather than guessing a height. The
    rack count, rack space and cable lengths are then only as good as that assumption.

    Source: EIA-310 rack units; clusterplan policy (unknown stays unknown, never becomes a number).
    Fix: set `rack_units` for the switch in a design catalog file (e.g. a modular chassis's height from
    its datasheet).
    Example:
        fabrics: {compute: {tiers: {spine: {switch: arista-7816r4-36pe}}}}   # a modular chassis, height unpublished
    """
    for name, fab in ctx.topology.fabrics.items():
        for tier in fab.tiers:
            if tier.switch.rack_units is None:
                yield Hit(f"{name} {tier.role} {tier.switch.id} has no rack_units in the catalog: each of its "
                          f"{fab.count(tier.role)} switches is placed in a network rack of its own",
                          (*tier.path, "switch"))


RULE = Rule("FAC004", "unknown-rack-units", "Every device's rack units are known", "warning", "all",
            unknown_rack_units)
