"""The out-of-band management network laid out over the rack plan (stage 3, expand).

It serves whatever stands in a rack, so it is laid out once the data fabrics' switches, appliances and
storage stand in their racks: each rack (or group, or the centre, per its leaf placement) gets enough
out-of-band leaves for the management ports in it, so copper runs stay short.

Zones (`fabrics.oob.zones: {racks: N}`): a site too large for one leaf-spine(-core) tree of management
switches is cut into zones of whole compute groups (about N GPU racks with their network racks; the
central racks a zone of their own). Each zone is its own tree, sized from its own leaves, its spines
(and cores) standing in the network racks of the zone's middle group; the top tier of every zone is
the routed edge of the management network (its uplinks go to the site's management routers, which
the design does not list). Switches are numbered over the zones, zone by zone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from validator.base.facts import fact
from validator.expand.fabric import FabricTopology, Zone
from validator.expand.sizing import FabricSize

if TYPE_CHECKING:
    from validator.expand.racks import Rack, Unit, _Builder

Places = dict[tuple[str, str], list[tuple["Rack", "Unit"]]]


@fact
class OobUnit:
    """A set of racks served by the same out-of-band leaves: its endpoints and its leaves."""

    racks: tuple[int, ...]
    first_leaf: int
    leaves: int
    endpoints: tuple[tuple[str, int, int], ...]   # (role, first index, count) blocks, in port order
    rack_objs: tuple[Rack, ...] = ()
    zone: int = 0


@fact
class OobSizer:
    """What the rack plan needs to lay out the out-of-band network."""

    per_leaf: int                                  # downlinks of one out-of-band leaf
    where: str                                     # rack, row or central
    builtin: int                                   # management switches inside a GPU rack's rack system
    bmc_links: int                                 # BMC ports per server
    size: Callable[[int, int], FabricTopology]     # (endpoints, leaves) -> the sized out-of-band fabric
    leaf_w: float = 0.0                            # one leaf's power and port allowance
    zone_racks: int | None = None                  # GPU racks per zone (None: one zone, the whole site)


def mgmt_blocks(b: _Builder, rack: Rack, bmc: int) -> list[tuple[str, int, int]]:
    """Management ports in a rack, as (role, first index, count) blocks in port order; a block that
    continues the one before it (the next server's BMC, the next switch's ports) joins it. The block
    being built is held in locals, not appended and rewritten per unit: a million-GPU site's 254,000
    servers pass through here."""
    system = b.r.server.rack_system
    system_ports = system.mgmt_ports if system is not None else 0
    blocks: list[tuple[str, int, int]] = []
    role, first, count = "", 0, 0          # the open block (count 0: none)
    per_role: dict[tuple[str, str], int] = {}
    for unit in rack.units:
        kind = unit.kind
        if kind == "server":
            if not bmc:
                continue
            name, start, n = "server", unit.index, 1
        elif kind == "switch":
            key = (unit.fabric, unit.role)
            per = per_role.get(key)
            if per is None:
                tier = b.fabrics[unit.fabric].tier(unit.role)
                per = per_role[key] = tier.switch.mgmt_ports if tier is not None and tier.switch.mgmt_ports else 0
            if not per:
                continue
            name, start, n = f"{unit.fabric}/{unit.role}", unit.index * per, per
        elif kind == "storage":
            name, start, n = "storage", unit.index, 1
        elif kind == "rack-system" and system_ports:
            if count:
                blocks.append((role, first, count))
            blocks.append(("rack-system", unit.index * system_ports, system_ports))
            count = 0       # a rack system's block is never joined by the next
            continue
        else:
            continue
        if count and name == role and first + count == start:
            count += n
        else:
            if count:
                blocks.append((role, first, count))
            role, first, count = name, start, n
    if count:
        blocks.append((role, first, count))
    return blocks


class _Zoning:
    """Which zone a rack belongs to, and where a zone's upper tiers stand."""

    def __init__(self, b: _Builder, zone_racks: int | None) -> None:
        self.groups = b.groups
        self.per = max(1, math.ceil(zone_racks / b.group_racks)) if zone_racks else b.groups
        self.on = zone_racks is not None
        self.count = math.ceil(self.groups / self.per)

    def of(self, rack: Rack) -> int:
        if rack.group is None:
            return self.count if self.on else 0       # the central racks: a zone of their own
        return min(rack.group, self.groups - 1) // self.per

    def middle(self, zone: int) -> int | None:
        """The group whose network racks hold a zone's upper tiers (None: the central racks)."""
        if not self.on or zone >= self.count:
            return None
        return (zone * self.per + min(self.groups, (zone + 1) * self.per) - 1) // 2


def place_oob(b: _Builder, sizer: OobSizer) -> tuple[list[OobUnit], Places, FabricTopology]:
    """Out-of-band leaves for the management ports of each rack (or group, or all), standing in the
    first rack they serve; their spines and cores centrally, or in their zone."""
    zoning = _Zoning(b, sizer.zone_racks)
    keyed: dict[object, list[Rack]] = {}
    for rack in b.all_racks():
        group = b.groups // 2 if rack.group is None else rack.group   # the centre stands mid-floor
        key: object = id(rack) if sizer.where == "rack" else (group if sizer.where == "row" else zoning.of(rack))
        keyed.setdefault(key, []).append(rack)
    units: list[OobUnit] = []
    for racks in sorted(keyed.values(), key=lambda rs: zoning.of(rs[0])):
        blocks = tuple(blk for rack in racks for blk in mgmt_blocks(b, rack, sizer.bmc_links))
        ports = sum(blk[2] for blk in blocks)
        if not ports:
            continue
        floor = sizer.builtin if sizer.where == "rack" and racks[0].kind == "gpu" else 1
        leaves = max(floor, math.ceil(ports / max(1, sizer.per_leaf)))
        first = units[-1].first_leaf + units[-1].leaves if units else 0
        units.append(OobUnit((), first, leaves, blocks, tuple(racks), zoning.of(racks[0])))
    zones: dict[int, list[OobUnit]] = {}
    for unit in units:
        zones.setdefault(unit.zone, []).append(unit)
    sized = [(z, _leaves_as_placed(sizer.size(sum(blk[2] for u in us for blk in u.endpoints), n), n))
             for z, us in sorted(zones.items()) for n in [sum(u.leaves for u in us)]] or [(0, sizer.size(0, 0))]
    oob = sized[0][1] if len(sized) == 1 else _combined([f for _, f in sized])
    places: Places = {("oob", "leaf"): _leaves(b, sizer, units, oob)}
    _upper(b, zoning, sized, oob, places)
    return units, places, oob


def _leaves(b: _Builder, sizer: OobSizer, units: list[OobUnit], oob: FabricTopology) -> list[tuple[Rack, Unit]]:
    from validator.expand.racks import switch_watts

    leaf = oob.tier("leaf")
    assert leaf is not None
    height, watts, allow = leaf.switch.rack_units or 1, switch_watts(leaf), b.port_power.switch(leaf)
    out: list[tuple[Rack, Unit]] = []
    for unit in units:
        home = unit.rack_objs[0]
        inside = sizer.builtin if home.kind == "gpu" and sizer.where == "rack" else 0
        for i in range(unit.leaves):
            spot = home
            if sizer.where != "rack":       # a row's (or the centre's) network racks, with room for it
                row = (b.groups // 2 if home.group is None else home.group) if sizer.where == "row" else None
                spot = b._net_rack(b.row_net.setdefault(row, []) if row is not None else b.central,
                                   row, height, (watts or 0.0) + allow)
            out.append((spot, spot.add(0 if i < inside else height, "switch", "oob", "leaf", len(out), watts, allow)))
    return out


def _upper(b: _Builder, zoning: _Zoning, sized: list[tuple[int, FabricTopology]], oob: FabricTopology,
           places: Places) -> None:
    """Spines and cores of each zone: a three-tier pod's spines with the middle of its leaves, the rest
    in the zone's middle group (one zone: centrally)."""
    from validator.expand.racks import switch_watts

    leaves = places[("oob", "leaf")]
    start = dict.fromkeys(("leaf", "spine", "core"), 0)
    for tier in oob.tiers[1:]:
        places[("oob", tier.role)] = []
    for zone, fab in sized:
        mine = leaves[start["leaf"]:start["leaf"] + fab.count("leaf")]
        for tier in fab.tiers[1:]:
            h, w, allow = tier.switch.rack_units or 1, switch_watts(tier), b.port_power.switch(tier)
            for i in range(fab.count(tier.role)):
                row = _spine_group(fab, i, mine) if tier.role == "spine" else None
                row = zoning.middle(zone) if row is None else row
                racks = b.row_net.setdefault(row, []) if row is not None else b.central
                rack = b._net_rack(racks, row, h, (w or 0.0) + allow)
                places[("oob", tier.role)].append(
                    (rack, rack.add(h, "switch", "oob", tier.role, start[tier.role] + i, w, allow)))
        for tier in fab.tiers:
            start[tier.role] += fab.count(tier.role)


def _spine_group(oob: FabricTopology, index: int, leaves: list[tuple[Rack, Unit]]) -> int | None:
    """A three-tier out-of-band pod's spine stands with the middle of its leaves (two tiers: None)."""
    plane = oob.plane
    if len(plane.tiers) < 3 or not leaves:
        return None
    pod = index // max(1, plane.spines_per_pod)
    first = pod * plane.leaves_per_pod
    last = min(len(leaves), first + plane.leaves_per_pod) - 1
    return leaves[min(len(leaves) - 1, (first + max(first, last)) // 2)][0].group


def _leaves_as_placed(fab: FabricTopology, leaves: int) -> FabricTopology:
    """An unbuildable tree (its problem is reported) still has the leaves the floor placed: counted and
    named one by one, not as the sizing's placeholder of one."""
    leaf = fab.plane.tiers[0]
    if leaf.count == leaves:
        return fab
    plane = replace(fab.plane, tiers=(replace(leaf, count=leaves), *fab.plane.tiers[1:]))
    return replace(fab, size=replace(fab.size, plane=plane))


def _combined(zones: list[FabricTopology]) -> FabricTopology:
    """One fabric of several zones: tiers of the largest zone's shape, counted over every zone."""
    shape = max(zones, key=lambda f: (len(f.tiers), f.count("leaf")))
    # each role's ports as laid out in the zone that uses the most of them: a smaller zone's switches can
    # use more ports of a tier than the largest zone's (the central racks' zone links more to its cores),
    # and every zone's port numbers must have a cage in the one tier the link plan reads
    widest = {t.role: max((z for f in zones if (z := f.tier(t.role)) is not None), key=lambda z: len(z.layout.slots))
              for t in shape.tiers}
    tiers = tuple(replace(widest[t.role], count=sum(f.count(t.role) for f in zones)) for t in shape.tiers)
    problems = list(dict.fromkeys(p for f in zones for p in f.problems))
    bases = dict.fromkeys(("leaf", "spine", "core"), 0)
    spans: list[Zone] = []
    for f in zones:
        spans.append(Zone(f.plane, bases["leaf"], bases["spine"], bases["core"]))
        for t in f.tiers:
            bases[t.role] += f.count(t.role)
    plane = replace(shape.plane, tiers=tiers)
    return replace(shape, size=FabricSize(1, plane, problems), extra_links=sum(f.extra_links for f in zones),
                   zones=tuple(spans))
