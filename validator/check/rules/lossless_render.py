"""NET012 lossless-render: Lossless buffers renderable for every switch of a lossless fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.derive.switch_os import lossless_headroom


def lossless_render(ctx: Context) -> Iterator[Hit]:
    """PFC pauses nothing without lossless buffers: every PFC port needs a priority-group headroom large
    enough for the bytes still in flight while the pause takes effect. A fabric with `lossless:`
    settings must run on switches whose OS and ASIC clusterplan can render that headroom for: SONiC
    from the ASIC's buffer templates (validator/data/sonic_buffers.yaml, a pg_profile_lookup row at
    the port's speed or faster), Cumulus Linux from the port's cable length on Spectrum ASICs. A
    switch with no buffer data would load PFC with no headroom: refused, not guessed.

    Source: IEEE 802.1Qbb (PFC headroom); SONiC buffer management (buffers_defaults_*.j2,
    pg_profile_lookup.ini, CABLE_LENGTH); Cumulus Linux RoCE lossless mode (PFC cable-length).
    Fix: pick a switch whose ASIC has buffer data (or add its vendor's SONiC buffer template values to
    validator/data/sonic_buffers.yaml with their source), or take `lossless:` off a lossy fabric.
    Example:
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800, uplink_speed_gbps: 800}}}}
    """
    for name, spec in ctx.design.fabrics:
        if spec is None or spec.lossless is None or spec.type == "infiniband":
            continue
        for tier in ctx.topology.fabrics[name].tiers:      # every declared fabric is built (expand)
            speeds = {tier.down_speed_gbps, *((tier.up_speed_gbps,) if tier.up_ports else ())}
            for speed in sorted(speeds):
                found = lossless_headroom(tier.switch.os, tier.switch.asic, int(speed * 1000))
                if found.problem is not None:
                    yield Hit(f"{name} {tier.role} {tier.switch.id} ({tier.switch.os}): {found.problem}; its PFC "
                              f"ports at {speed:g}G would have no lossless headroom",
                              ("fabrics", name, "tiers", tier.role, "switch"))
                    break


RULE = Rule("NET012", "lossless-render", "Lossless buffers renderable for every switch of a lossless fabric",
            "error", "all", lossless_render, waivable=False)
