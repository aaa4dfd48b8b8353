"""The floor plan as racks: which rack every device stands in, at which rack unit (stage 3, expand).

Racks are listed in floor order; `validator.derive.placement` turns that order into halls, rows and
positions, and cable lengths. What goes where follows each tier's placement (`placement` in the
design, defaults in `validator.expand.sizing.placement`):

- GPU racks hold `servers_per_rack` servers (bottom up), the server's rack system (NVLink switch
  trays, power shelves), then any top-of-rack switches (`rack`), then the out-of-band leaf on top.
- Each compute group (a scalable unit of a rail-optimized compute fabric, else a row of GPU racks)
  has its network racks in the middle of its GPU racks (`row`): they hold the row-placed leaves that
  serve the group's servers, and (three tiers) the spines of its pods.
- Central network racks in the middle of the floor hold `central` switches (spines and cores by
  default), leaves that serve only appliances, the appliances themselves and storage nodes.
- Several switches share a network rack up to its rack units (less a reserve for patch panels) and
  its power budget. The budget is filled with each device's power plus an allowance for the optics in
  its cages and its ends of active cables (the heaviest catalog part a port at that speed can take):
  media are chosen later (derive), and the rack's power then counts what was chosen
  (`validator.derive.rack_power`), which stays within the allowance.

The out-of-band network is laid out here too, because it serves whatever stands in a rack: each
rack (or group, or the centre, per its leaf placement) gets enough out-of-band leaves for the
management ports in it, so copper runs stay short.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from validator.base.facts import fact
from validator.expand.fabric import FabricTopology
from validator.expand.port_power import PortPower
from validator.expand.sizing import TierSize, placement
from validator.resolve.resolved import Resolved


@fact
class Unit:
    """One device (or block of devices) in a rack."""

    ru: int                 # lowest rack unit, 1-based
    height: int
    kind: str               # server, switch, storage, appliance, rack-system
    fabric: str
    role: str               # server, leaf/spine/core, storage, an appliance name, rack-system
    index: int              # device index within its role (switches: over every plane)
    power_w: float | None


@dataclass(eq=False)
class Rack:
    index: int              # floor order (set when the floor is laid out)
    kind: str               # gpu, network, storage
    group: int | None       # compute group of a GPU or row network rack; None: central
    units: list[Unit] = field(default_factory=list)
    ru_used: int = 0
    packed_w: float = 0.0      # known device power plus the optics allowance: what packing fills the budget with

    def fits(self, height: int, watts: float | None, room: int, budget_w: float) -> bool:
        return self.ru_used + height <= room and self.packed_w + (watts or 0) <= budget_w

    def add(self, height: int, kind: str, fabric: str, role: str, index: int, power_w: float | None,
            allowance_w: float = 0.0) -> Unit:
        unit = Unit(self.ru_used + 1, height, kind, fabric, role, index, power_w)
        self.units.append(unit)
        self.ru_used += height
        self.packed_w += (power_w or 0.0) + allowance_w
        return unit


@fact
class OobUnit:
    """A set of racks served by the same out-of-band leaves: its endpoints and its leaves."""

    racks: tuple[int, ...]
    first_leaf: int
    leaves: int
    endpoints: tuple[tuple[str, int, int], ...]   # (role, first index, count) blocks, in port order
    rack_objs: tuple[Rack, ...] = ()


@fact
class OobSizer:
    """What the rack plan needs to lay out the out-of-band network."""

    per_leaf: int                                  # downlinks of one out-of-band leaf
    where: str                                     # rack, row or central
    builtin: int                                   # management switches inside a GPU rack's rack system
    bmc_links: int                                 # BMC ports per server
    size: Callable[[int, int], FabricTopology]     # (endpoints, leaves) -> the sized out-of-band fabric


@dataclass
class RackPlan:
    racks: list[Rack]
    gpu_rack_at: list[int]                       # GPU rack g -> floor index
    servers_per_rack: int
    server_ru: int
    switches: dict[tuple[str, str], list[tuple[int, int]]]   # (fabric, role) -> (rack, ru) per device
    appliances: dict[str, list[tuple[int, int]]]             # role -> (rack, ru) per device
    oob_units: list[OobUnit]
    group_racks: int                              # GPU racks per compute group
    rack_units: int
    spots: list[tuple[int, int, int]] = field(default_factory=list)   # rack -> (hall, row, position)

    def server(self, s: int) -> tuple[int, int]:
        g, k = divmod(s, self.servers_per_rack)
        return self.gpu_rack_at[g], k * self.server_ru + 1

    def switch(self, fabric: str, role: str, index: int) -> tuple[int, int]:
        return self.switches[(fabric, role)][index]

    def appliance(self, role: str, index: int) -> tuple[int, int]:
        places = self.appliances.get(role)
        return places[index] if places else (self.central_start, 1)

    @property
    def central_start(self) -> int:
        return next((r.index for r in self.racks if r.group is None), 0)

    def count(self, kind: str) -> int:
        return sum(1 for r in self.racks if r.kind == kind)


def switch_watts(tier: TierSize) -> float | None:
    return tier.switch.power_max_w or tier.switch.power_typical_w


def _leaf_first_server(fab: FabricTopology, local: int) -> int | None:
    """First server of leaf `local` (index within its plane); None for leaves of appliances only."""
    plane = fab.plane
    if local >= plane.server_leaves or not fab.links_per_server:
        return None
    per_su = plane.rails * plane.leaves_per_rail
    su, k = divmod(local, per_su)
    return su * plane.su_servers + (k % plane.leaves_per_rail) * plane.servers_per_leaf


class _Builder:
    def __init__(self, resolved: Resolved, fabrics: dict[str, FabricTopology]) -> None:
        self.r = resolved
        self.fabrics = fabrics
        design = resolved.design
        self.spr = design.compute.servers_per_rack
        self.servers = design.compute.count
        self.gpu_racks = math.ceil(self.servers / self.spr)
        self.rack_ru = resolved.rack.rack_units or 48
        self.budget_w = design.site.rack.power_budget_kw * 1000
        self.reserve = int(resolved.layout["network_rack_reserved_ru"])
        self.group_racks = self._group_racks()
        self.groups = max(1, math.ceil(self.gpu_racks / self.group_racks))
        self.gpu: list[Rack] = []
        self.row_net: dict[int, list[Rack]] = {}
        self.central: list[Rack] = []
        self.switches: dict[tuple[str, str], list[tuple[Rack, Unit]]] = {}
        self.appliances: dict[str, list[tuple[Rack, Unit]]] = {}
        self.oob: FabricTopology | None = None
        self.port_power = PortPower(resolved.catalog)

    def _group_racks(self) -> int:
        compute = self.fabrics.get("compute")
        if compute is not None and compute.topology == "rail-optimized" and compute.plane.su_servers:
            return max(1, math.ceil(compute.plane.su_servers / self.spr))
        return max(1, int(self.r.layout["racks_per_row"]))

    def group_of_server(self, s: int) -> int:
        return min(self.groups - 1, (s // self.spr) // self.group_racks)

    def build_gpu_racks(self) -> None:
        server = self.r.server
        system = server.rack_system
        for g in range(self.gpu_racks):
            rack = Rack(-1, "gpu", g // self.group_racks)
            first = g * self.spr
            for s in range(first, min(self.servers, first + self.spr)):
                rack.add(server.rack_units, "server", "", "server", s, server.max_power_w)
            if system and system.extra_rack_units:
                rack.add(system.extra_rack_units, "rack-system", "", "rack-system", g, None if
                         server.max_power_w is None else 0.0)
            self.gpu.append(rack)

    def _net_rack(self, racks: list[Rack], group: int | None, height: int, watts: float | None) -> Rack:
        room = self.rack_ru - self.reserve
        for rack in racks:
            if rack.fits(height, watts, room, self.budget_w):
                return rack
        rack = Rack(-1, "network", group)
        racks.append(rack)
        return rack

    def all_racks(self) -> list[Rack]:
        return self.gpu + [r for g in sorted(self.row_net) for r in self.row_net[g]] + self.central

    def mgmt_blocks(self, rack: Rack, bmc: int) -> list[tuple[str, int, int]]:
        """Management ports in a rack, as (role, first index, count) blocks in port order."""
        system = self.r.server.rack_system
        blocks: list[tuple[str, int, int]] = []
        for unit in rack.units:
            if unit.kind == "server" and bmc:
                _append(blocks, "server", unit.index, 1)
            elif unit.kind == "rack-system" and system is not None and system.mgmt_ports:
                blocks.append(("rack-system", unit.index * system.mgmt_ports, system.mgmt_ports))
            elif unit.kind == "switch":
                tier = self.fabrics[unit.fabric].tier(unit.role)
                if tier is not None and tier.switch.mgmt_ports:
                    per = tier.switch.mgmt_ports
                    _append(blocks, f"{unit.fabric}/{unit.role}", unit.index * per, per)
            elif unit.kind == "storage":
                _append(blocks, "storage", unit.index, 1)
        return blocks

    def place_oob(self, sizer: OobSizer) -> tuple[list[OobUnit], dict[tuple[str, str], list[tuple[Rack, Unit]]]]:
        """Out-of-band leaves for the management ports of each rack (or group, or all), standing in the
        first rack they serve; their spines and cores centrally."""
        keyed: dict[object, list[Rack]] = {}
        for rack in self.all_racks():
            group = self.groups // 2 if rack.group is None else rack.group   # the centre stands mid-floor
            key: object = id(rack) if sizer.where == "rack" else (group if sizer.where == "row" else 0)
            keyed.setdefault(key, []).append(rack)
        units: list[OobUnit] = []
        first = 0
        for racks in keyed.values():
            blocks = tuple(b for rack in racks for b in self.mgmt_blocks(rack, sizer.bmc_links))
            ports = sum(b[2] for b in blocks)
            if not ports:
                continue
            floor = sizer.builtin if sizer.where == "rack" and racks[0].kind == "gpu" else 1
            leaves = max(floor, math.ceil(ports / max(1, sizer.per_leaf)))
            units.append(OobUnit((), first, leaves, blocks, tuple(racks)))
            first += leaves
        oob = sizer.size(sum(b[2] for u in units for b in u.endpoints), first)
        places: dict[tuple[str, str], list[tuple[Rack, Unit]]] = {}
        leaf = oob.tier("leaf")
        assert leaf is not None
        height, watts, allow = leaf.switch.rack_units or 1, switch_watts(leaf), self.port_power.switch(leaf)
        out: list[tuple[Rack, Unit]] = []
        for unit in units:
            home = unit.rack_objs[0]
            inside = sizer.builtin if home.kind == "gpu" and sizer.where == "rack" else 0
            for i in range(unit.leaves):
                spot = home
                if sizer.where != "rack":       # a row's (or the centre's) network racks, with room for it
                    row = (self.groups // 2 if home.group is None else home.group) if sizer.where == "row" else None
                    spot = self._net_rack(self.row_net.setdefault(row, []) if row is not None else self.central,
                                          row, height, (watts or 0.0) + allow)
                out.append((spot, spot.add(0 if i < inside else height, "switch", "oob", "leaf", len(out), watts,
                                           allow)))
        places[("oob", "leaf")] = out
        for tier in oob.tiers[1:]:
            h, w, allow = tier.switch.rack_units or 1, switch_watts(tier), self.port_power.switch(tier)
            spots = []
            for i in range(oob.count(tier.role)):
                pod_row = self._oob_spine_group(oob, tier.role, i, out) if tier.role == "spine" else None
                racks = self.row_net.setdefault(pod_row, []) if pod_row is not None else self.central
                rack = self._net_rack(racks, pod_row, h, (w or 0.0) + allow)
                spots.append((rack, rack.add(h, "switch", "oob", tier.role, i, w, allow)))
            places[("oob", tier.role)] = spots
        self.oob = oob
        return units, places

    def place_switches(self) -> None:
        for name, fab in self.fabrics.items():
            if name == "oob":
                continue
            for tier in fab.tiers:
                where = placement(self.r.fabrics[name], tier.role, self.spr, len(fab.tiers))
                self.switches[(name, tier.role)] = [self._place(fab, tier, i, where)
                                                    for i in range(fab.count(tier.role))]

    def _place(self, fab: FabricTopology, tier: TierSize, index: int, where: str) -> tuple[Rack, Unit]:
        # a switch whose height the catalog does not give stands in a network rack of its own (FAC004 says so)
        height = tier.switch.rack_units or self.rack_ru - self.reserve
        watts, allow = switch_watts(tier), self.port_power.switch(tier)
        group: int | None = None
        if tier.role == "leaf":
            first = _leaf_first_server(fab, index % tier.count)
            if first is not None and first < self.servers:
                if where == "rack" and tier.switch.rack_units:
                    rack = self.gpu[first // self.spr]
                    return rack, rack.add(height, "switch", fab.name, tier.role, index, watts, allow)
                group = self.group_of_server(first) if where == "row" else None
        elif tier.role == "spine" and where == "row":
            # a pod's spines stand with the middle of the pod's leaves, which keeps its longest run short
            pod = (index % tier.count) // max(1, fab.plane.spines_per_pod)
            plane = fab.plane
            last = min(plane.server_leaves, (pod + 1) * plane.leaves_per_pod) - 1
            middle = (pod * plane.leaves_per_pod + max(last, pod * plane.leaves_per_pod)) // 2
            first = _leaf_first_server(fab, middle)
            group = self.group_of_server(first) if first is not None and first < self.servers else None
        racks = self.row_net.setdefault(group, []) if group is not None else self.central
        rack = self._net_rack(racks, group, height, (watts or 0.0) + allow)
        return rack, rack.add(height, "switch", fab.name, tier.role, index, watts, allow)

    def place_appliances(self) -> None:
        design = self.r.design
        for name in self.fabrics:
            spec = self.r.fabrics[name].spec
            for e in spec.extra_endpoints:
                if e.name in self.appliances:
                    continue
                allow = self.port_power.node(spec.speed_gbps, e.ports)
                self.appliances[e.name] = [self._central(1, "appliance", name, e.name, i, e.power_w, allow)
                                           for i in range(e.count)]
        if design.storage and design.storage.nodes:
            n = design.storage.nodes
            fab = self.r.fabrics.get("storage")
            allow = self.port_power.node(fab.spec.speed_gbps, n.ports) if fab else 0.0
            self.appliances["storage"] = [self._central(n.rack_units or 2, "storage", "storage", "storage", i,
                                                        n.power_w, allow) for i in range(n.count)]

    def _central(self, height: int, kind: str, fabric: str, role: str, index: int,
                 watts: float | None, allow: float) -> tuple[Rack, Unit]:
        rack = self._net_rack(self.central, None, height, (watts or 0.0) + allow)
        return rack, rack.add(height, kind, fabric, role, index, watts, allow)

    def _oob_spine_group(self, oob: FabricTopology, role: str, index: int,
                         leaves: list[tuple[Rack, Unit]]) -> int | None:
        """A three-tier out-of-band pod's spine stands with the middle of its leaves (two tiers: centrally)."""
        plane = oob.plane
        if len(plane.tiers) < 3 or not leaves:
            return None
        pod = index // max(1, plane.spines_per_pod)
        first = pod * plane.leaves_per_pod
        last = min(len(leaves), first + plane.leaves_per_pod) - 1
        return leaves[(first + max(first, last)) // 2][0].group

    def floor(self) -> tuple[list[Rack], list[tuple[int, int, int]]]:
        """Lay the racks out in rows and halls: each compute group (its GPU racks with its network racks in
        the middle) starts on a new row and stays in one hall when it fits one; the central racks take rows
        of their own in the middle of the floor. Returns the racks in floor order and their spots."""
        per_row = max(1, int(self.r.layout["racks_per_row"]))
        per_hall = max(1, int(self.r.layout["rows_per_hall"]))
        blocks: list[list[Rack]] = []
        middle = self.groups // 2
        for group in range(self.groups):
            if group == middle and self.central:
                blocks.append(self.central)
            mine = [r for r in self.gpu if r.group == group]
            half = len(mine) // 2
            blocks.append(mine[:half] + self.row_net.get(group, []) + mine[half:])
        if self.groups <= middle and self.central:
            blocks.append(self.central)
        order: list[Rack] = []
        spots: list[tuple[int, int, int]] = []
        hall = row = 0
        for block in blocks:
            rows = -(-len(block) // per_row)
            if row and row + rows > per_hall and rows <= per_hall:
                hall, row = hall + 1, 0        # a block that fits a hall does not straddle two
            for k, rack in enumerate(block):
                r, position = divmod(k, per_row)
                h, r = divmod(row + r, per_hall)
                rack.index = len(order)
                order.append(rack)
                spots.append((hall + h, r, position))
            row += rows
            hall, row = hall + row // per_hall, row % per_hall
        return order, spots


def plan_racks(resolved: Resolved, fabrics: dict[str, FabricTopology],
               oob: OobSizer | None = None) -> tuple[RackPlan, FabricTopology | None]:
    """Place every device: the data fabrics' switches, appliances and storage, then (given a sizer
    for it) the out-of-band network over what stands in each rack; then lay the racks out in floor order."""
    b = _Builder(resolved, fabrics)
    b.build_gpu_racks()
    b.place_switches()
    b.place_appliances()
    units: list[OobUnit] = []
    oob_places: dict[tuple[str, str], list[tuple[Rack, Unit]]] = {}
    if oob is not None:
        units, oob_places = b.place_oob(oob)
    racks, spots = b.floor()
    switches = {k: [(rack.index, unit.ru) for rack, unit in v] for k, v in {**b.switches, **oob_places}.items()}
    appliances = {k: [(rack.index, unit.ru) for rack, unit in v] for k, v in b.appliances.items()}
    units = [OobUnit(tuple(r.index for r in u.rack_objs), u.first_leaf, u.leaves, u.endpoints, ()) for u in units]
    plan = RackPlan(racks, [rack.index for rack in b.gpu], b.spr, resolved.server.rack_units, switches, appliances,
                    units, b.group_racks, b.rack_ru, spots)
    return plan, b.oob


def _append(blocks: list[tuple[str, int, int]], role: str, first: int, count: int) -> None:
    """Add a block, merging it with the previous one when it continues it (keeps 100k racks small)."""
    if blocks and blocks[-1][0] == role and blocks[-1][1] + blocks[-1][2] == first:
        blocks[-1] = (role, blocks[-1][1], blocks[-1][2] + count)
    else:
        blocks.append((role, first, count))
