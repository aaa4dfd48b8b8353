"""NET011 cage-fit: every module and cable plug fits the cage it goes in."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def cage_fit(ctx: Context) -> Iterator[Hit]:
    """Every transceiver and cable plug fits its cage: an OSFP module in an OSFP cage, a QSFP module in a
    QSFP cage of its generation or a later one (QSFP-DD takes QSFP112), and an OSFP module's top matches
    the cage (finned modules in air-cooled switches, flat ones in adapters and liquid-cooled switches).
    A part must also carry the link's protocol (its `protocols`: an InfiniBand-only XDR module is no part for
    an Ethernet fabric). clusterplan only chooses parts that fit; when the catalog has none for a cage at that
    speed, reach and protocol, the link is left unresolved (no part in the BOM) and this rule names the cage
    and why, e.g. "(infiniband modules only, no ethernet one)".

    Source: OSFP MSA and QSFP-DD MSA mechanical specifications; NVIDIA LinkX 200G-PAM4 product list
    (IHS modules only in air-cooled switches, RHS in ConnectX-8 and liquid-cooled cages);
    validator/data/cages.yaml.
    Fix: add a module of the cage's form factor (and top) at that speed to a design catalog file, or pick a
    switch SKU with the other cage (e.g. an OSFP rather than a QSFP-DD variant).
    Example:
        fabrics: {compute: {tiers: {leaf: {switch: arista-7060x6-64de}}}}   # QSFP-DD cages, no QSFP-DD 400G module
    """
    from validator.derive.links import device_namer

    plan = ctx.derived.cabling
    for (fabric, _end, kind), (a_role, a_idx, z_role, z_idx, m, _length) in sorted(
            plan.tally.problems.items(), key=lambda kv: kv[0]):
        if kind != "cage":
            continue
        speed = ctx.topology.fabrics[fabric].speed_gbps
        a = device_namer(ctx.topology, fabric, a_role)(a_idx)
        z = device_namer(ctx.topology, fabric, z_role)(z_idx)
        path = ("fabrics", fabric, "tiers", z_role, "switch") if z_role in ("leaf", "spine", "core") else \
            ("fabrics", fabric, "speed_gbps")
        cage, _, why = m.unfit.partition(" (")      # "OSFP224 flat-top (infiniband modules only, no ethernet one)"
        why = f" ({why}" if why else ""
        yield Hit(f"{fabric} {a_role} -> {z_role} (e.g. {a} -> {z}): no catalog module fits the {cage} cage "
                  f"at {speed:g}G{why}; the link is left without media", path)


RULE = Rule("NET011", "cage-fit", "Every module fits its cage", "error", "all", cage_fit, waivable=False)
