"""Network rules (NET) for every design."""

from __future__ import annotations

import math
from collections.abc import Iterator

from validator.check.base import Hit
from validator.check.context import Context


def switch_radix(ctx: Context) -> Iterator[Hit]:
    """Ports used on every switch must not exceed the ports it has at the link speed.

    Source: switch hardware manuals in the catalog (port groups and breakouts).
    Fix: add switches to the tier (or remove its explicit count so clusterplan sizes it).
    Example:
        tiers: {leaf: {switch: sonic-th5-64x800, count: 1}}   # 256 server links on a 128-port leaf
    """
    for name, fab in ctx.topology.fabrics.items():
        for tier in fab.tiers:
            cages_needed = 0.0
            per_switch_down = math.ceil(tier.down_used / tier.count)
            per_switch_up = math.ceil(tier.up_used / tier.count)
            down_cap = tier.switch.ports_at(tier.down_speed_gbps)
            up_cap = tier.switch.ports_at(tier.up_speed_gbps)
            if down_cap:
                cages_needed += per_switch_down / down_cap
            if up_cap and tier.up_speed_gbps != tier.down_speed_gbps:
                dedicated = all(int(tier.down_speed_gbps) not in g.ports_per_cage
                                for g in tier.switch.port_groups if int(tier.up_speed_gbps) in g.ports_per_cage)
                if not dedicated:
                    cages_needed += per_switch_up / up_cap
            elif up_cap:
                cages_needed += per_switch_up / up_cap
            over_down = per_switch_down > tier.down_ports
            if cages_needed > 1 + 1e-9 or over_down:
                yield Hit(f"{name} {tier.role} {tier.switch.id}: {per_switch_down} down + {per_switch_up} up links per "
                          f"switch exceed its {tier.down_ports} down / {down_cap} ports at "
                          f"{tier.down_speed_gbps:g}G", ("fabrics", name, "tiers", tier.role))


def link_speed_match(ctx: Context) -> Iterator[Hit]:
    """Both ends of a link run at the same speed: the server NIC at the fabric's speed, and every switch
    with ports at that speed.

    Source: IEEE 802.3 / InfiniBand: a link trains to one speed; auto-negotiation down wastes the NIC.
    Fix: set `speed_gbps` to the NIC speed, or pick switches and NICs of the same speed.
    Example:
        fabrics: {compute: {speed_gbps: 200}}   # DGX H100 compute NICs run at 400G
    """
    for name, fab in ctx.resolved.fabrics.items():
        if fab.links_per_server and fab.nic_speed_gbps != fab.spec.speed_gbps:
            yield Hit(f"{name}: server NICs run at {fab.nic_speed_gbps:g}G but the fabric is {fab.spec.speed_gbps:g}G",
                      ("fabrics", name, "speed_gbps"))
        if fab.spec.type == "infiniband" and any(t.switch.technology != "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an InfiniBand fabric with Ethernet switches", ("fabrics", name, "type"))
        if fab.spec.type != "infiniband" and any(t.switch.technology == "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an Ethernet fabric with InfiniBand switches", ("fabrics", name, "type"))


def oob_reach(ctx: Context) -> Iterator[Hit]:
    """An out-of-band management network reaches every server BMC and every switch management port.

    Source: shared/docs/domain.md section 3 (a separate out-of-band management network); DGX SuperPOD
    RA (SN2201 OOB switches).
    Fix: add `fabrics.oob` with enough 1G leaf ports for every BMC and switch.
    Example:
        fabrics: {compute: ...}   # no `oob:` fabric
    """
    if ctx.design.fabrics.oob is None:
        yield Hit("no out-of-band management network (fabrics.oob)", ("fabrics",))
        return
    oob = ctx.topology.fabrics.get("oob")
    if oob is None:
        return
    oob_links = ctx.resolved.fabrics["oob"].links_per_server
    if oob_links == 0:
        yield Hit("the servers have no BMC port on the out-of-band network", ("fabrics", "oob"))
    elif not any(b.a == "server" for b in oob.bundles):
        yield Hit("servers are not connected to the out-of-band leaves", ("fabrics", "oob"))
    unreachable = sorted(f"{name}/{t.role}" for name, f in ctx.topology.fabrics.items() if name != "oob"
                         for t in f.tiers)
    mgmt = sum(b.count for b in oob.bundles if b.a == "switch-mgmt")
    expected = sum(t.count * t.switch.mgmt_ports for name, f in ctx.topology.fabrics.items() if name != "oob"
                   for t in f.tiers)
    if mgmt < expected:
        yield Hit(f"only {mgmt} of {expected} switch management ports ({', '.join(unreachable)}) reach the "
                  "out-of-band network", ("fabrics", "oob"))


def optics_reach(ctx: Context) -> Iterator[Hit]:
    """Every link's media reaches its length: passive copper a few metres and only inside a rack,
    multimode SR 50 m at NDR/400G, single-mode DR 100-500 m, FR 2 km. Lengths come from the rack layout
    of the cabling plan.

    Source: NVIDIA LinkX specifications and "Interconnect cabling requirements NDR/400G" (MPO MMF <= 50 m,
    MPO SMF <= 500 m, LC SMF <= 2 km); shared/docs/hardware-notes.md section 6.
    Fix: let clusterplan choose the media (`media: auto`), shorten the runs with a tighter layout, or add
    longer-reach optics to the catalog.
    Example:
        fabrics: {compute: {media: {servers: dac}}}   # DAC from servers to leaves in another rack
    """
    from validator.derive.cabling import Plan
    from validator.expand.topology import device_namer

    plan = Plan(ctx.topology)
    for (fabric, end, kind), (a_role, a_idx, z_role, z_idx, m, length) in sorted(
            plan.tally.problems.items(), key=lambda kv: kv[0]):
        if kind == "none":
            problem = f"no catalog media reaches {length:.0f} m at {plan_speed(ctx, fabric, a_role)}G"
        elif kind == "copper":
            problem = f"{m.kind} copper between racks ({length:.0f} m)"
        else:
            problem = f"{m.kind} reaches {m.reach_m:g} m but the run is {length:.0f} m"
        spec = getattr(ctx.design.fabrics, fabric)
        forced = spec.media is not None and getattr(spec.media, end) != "auto"
        path = ("fabrics", fabric, "media", end) if forced else ("fabrics", fabric, "speed_gbps")
        a = device_namer(ctx.topology, fabric, a_role)(a_idx)
        z = device_namer(ctx.topology, fabric, z_role)(z_idx)
        yield Hit(f"{fabric} {a_role} -> {z_role} (e.g. {a} -> {z}): {problem}", path)


def plan_speed(ctx: Context, fabric: str, a_role: str) -> str:
    """Speed of a fabric's links from `a_role` (the uplink speed for switch tiers)."""
    fab = ctx.topology.fabrics[fabric]
    tier = fab.tier(a_role)
    return f"{tier.up_speed_gbps:g}" if tier is not None else f"{fab.speed_gbps:g}"
