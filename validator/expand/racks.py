"""The floor plan as racks: which rack every device stands in, at which rack unit (the expand stage).

Racks are listed in floor order; `validator.derive.placement` turns that order into halls, rows and
positions, and cable lengths. What goes where follows each tier's placement (`placement` in the
design, defaults in `validator.expand.sizing.placement`):

- GPU racks hold `servers_per_rack` servers (bottom up), the server's rack system (NVLink switch
  trays, power shelves), an in-rack CDU (a CDU with rack units in the catalog, in the first rack of
  each `racks_per_cdu`), then any top-of-rack switches (`rack`), then the out-of-band leaf on top.
- Each compute group (a scalable unit of a rail-optimized compute fabric, else a row of GPU racks)
  has its network racks in the middle of its GPU racks (`row`): they hold the row-placed leaves that
  serve the group's servers, and (three tiers) the spines of its pods.
- Central network racks in the middle of the floor hold `central` switches (spines and cores by
  default), leaves that serve only appliances, the appliances themselves and storage nodes.
- Several switches share a network rack up to its rack units (less a reserve for patch panels) and
  its power budget, and an air-cooled one (no liquid-cooled switch in it) up to the air-cooling limit
  (`air_cooling_max_kw`, FAC005), less what the out-of-band leaf placed in it draws. The budget is
  filled with each device's power plus an allowance for the optics in its cages and its ends of
  active cables (the heaviest catalog part a port at that speed can take): media are chosen later
  (derive), and the rack's power then counts what was chosen (`validator.derive.rack_power`), which
  stays within the allowance.
- The floor (`floor_spots`): blocks of racks along rows and halls, in one pass.

The out-of-band network is laid out over this plan (`validator.expand.oob`), because it serves
whatever stands in a rack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from validator.base.facts import fact
from validator.base.gc_pause import paused_gc
from validator.expand.fabric import FabricTopology
from validator.expand.floor import central_at_hall_front, floor_spots
from validator.expand.oob import OobSizer, OobUnit, place_oob
from validator.expand.port_power import PortPower
from validator.expand.sizing import TierSize, placement
from validator.resolve.resolved import Resolved


@fact
class Unit:
    """One device (or block of devices) in a rack."""

    __slots__ = ("fabric", "height", "index", "kind", "power_w", "role", "ru")   # a million-GPU site has 326,000

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

    def cooling(self, fabrics: dict[str, FabricTopology], site_cooling: str) -> str:
        """How the rack is cooled: a GPU rack as the site says; any other rack by air unless a switch
        in it is liquid-cooled."""
        if self.kind == "gpu":
            return site_cooling
        liquid = any(u.kind == "switch" and (tier := fabrics[u.fabric].tier(u.role)) is not None
                     and tier.switch.cooling == "liquid" for u in self.units)
        return "liquid" if liquid else "air"

    def add(self, height: int, kind: str, fabric: str, role: str, index: int, power_w: float | None,
            allowance_w: float = 0.0) -> Unit:
        unit = Unit(self.ru_used + 1, height, kind, fabric, role, index, power_w)
        self.units.append(unit)
        self.ru_used += height
        self.packed_w += (power_w or 0.0) + allowance_w
        return unit

    def add_servers(self, servers: range, height: int, power_w: float | None) -> None:
        """`add` of each server in turn (the hot loop of a million-GPU site's floor plan)."""
        units, ru, packed, watts = self.units, self.ru_used, self.packed_w, (power_w or 0.0) + 0.0
        for s in servers:
            units.append(Unit(ru + 1, height, "server", "", "server", s, power_w))
            ru += height
            packed += watts
        self.ru_used, self.packed_w = ru, packed


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

    def server_racks(self, servers: int) -> list[int]:
        """The rack of every server, `server(s)[0]` for s < servers."""
        at, per = self.gpu_rack_at, self.servers_per_rack
        return [at[s // per] for s in range(servers)]

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
        air = resolved.threshold("air_cooling_max_kw")
        self.air_w = min(self.budget_w, float(air) * 1000)   # an air-cooled network rack's power (FAC002)
        self.oob_w = 0.0        # kept free in each network rack for the out-of-band leaf placed in it
        self._cursor: dict[tuple[int, int, float | None, float], int] = {}   # first fit resumes here
        self.reserve = int(resolved.layout["network_rack_reserved_ru"])
        self.group_racks = self._group_racks()
        self.groups = max(1, math.ceil(self.gpu_racks / self.group_racks))
        self.gpu: list[Rack] = []
        self.row_net: dict[int, list[Rack]] = {}
        self.central: list[Rack] = []
        self.switches: dict[tuple[str, str], list[tuple[Rack, Unit]]] = {}
        self.appliances: dict[str, list[tuple[Rack, Unit]]] = {}
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
            rack.add_servers(range(first, min(self.servers, first + self.spr)), server.rack_units,
                             server.max_power_w)
            if system and system.extra_rack_units:
                rack.add(system.extra_rack_units, "rack-system", "", "rack-system", g, None if
                         server.max_power_w is None else 0.0)
            cdu_units, per_cdu = self._in_rack_cdu()
            if cdu_units and g % per_cdu == 0:      # an in-rack CDU stands in the first rack it serves
                rack.add(cdu_units, "cdu", "", "cdu", g // per_cdu, None)
            self.gpu.append(rack)

    def _in_rack_cdu(self) -> tuple[int, int]:
        """(rack units, GPU racks served) of the site's CDU when it stands in a rack; (0, 1) otherwise."""
        site = self.r.design.site.rack
        if site.cooling != "liquid" or not site.cdu:
            return 0, 1
        cdu = self.r.catalog.find("facility", site.cdu)
        return (cdu.rack_units or 0) if cdu is not None else 0, site.racks_per_cdu or 1

    def _net_rack(self, racks: list[Rack], group: int | None, height: int, watts: float | None,
                  liquid: bool = False) -> Rack:
        """The first rack of `racks` with room for the device, else a new one (first fit). A rack that once
        had no room for a device of some height and power never has again (racks only fill), so each
        kind of device resumes where the last one stopped: linear in the devices and racks."""
        room = self.rack_ru - self.reserve
        budget = (self.budget_w if liquid else self.air_w) - self.oob_w
        key = (id(racks), height, watts, budget)
        i = self._cursor.get(key, 0)
        while i < len(racks) and not racks[i].fits(height, watts, room, budget):
            i += 1
        self._cursor[key] = i
        if i < len(racks):
            return racks[i]
        rack = Rack(-1, "network", group)
        racks.append(rack)
        return rack

    def all_racks(self) -> list[Rack]:
        return self.gpu + [r for g in sorted(self.row_net) for r in self.row_net[g]] + self.central

    def place_switches(self) -> None:
        for name, fab in self.fabrics.items():
            if name == "oob":
                continue
            for tier in fab.tiers:
                where = placement(self.r.fabrics[name], tier.role, self.spr, len(fab.tiers))
                # a switch whose height the catalog does not give stands in a network rack of its own (FAC004)
                each = (tier.switch.rack_units or self.rack_ru - self.reserve, switch_watts(tier),
                        self.port_power.switch(tier))
                self.switches[(name, tier.role)] = [self._place(fab, tier, i, where, each)
                                                    for i in range(fab.count(tier.role))]

    def _place(self, fab: FabricTopology, tier: TierSize, index: int, where: str,
               each: tuple[int, float | None, float]) -> tuple[Rack, Unit]:
        height, watts, allow = each     # rack units, power and optics allowance of one switch of the tier
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
        rack = self._net_rack(racks, group, height, (watts or 0.0) + allow, tier.switch.cooling == "liquid")
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

    def floor(self) -> tuple[list[Rack], list[tuple[int, int, int]]]:
        """Lay the racks out (`floor_spots`); returns the racks in floor order and their spots."""
        blocks, pods = self._blocks()
        per_row, rows = int(self.r.layout["racks_per_row"]), int(self.r.layout["rows_per_hall"])
        together = pods if self._pod_groups() > 1 else None
        if together is not None and -1 in together:
            blocks, together = central_at_hall_front(blocks, together, per_row, rows)
        spots = floor_spots([len(b) for b in blocks], per_row, rows, together)
        order = [rack for block in blocks for rack in block]
        for i, rack in enumerate(order):
            rack.index = i
        return order, spots

    def _blocks(self) -> tuple[list[list[Rack]], list[int]]:
        """The floor's blocks in order: each group's racks (GPU racks around its network racks), groups
        glued to the next by a shared leaf joined, the central racks in the middle; and the pod of each
        block (the central racks: -1), which `floor_spots` keeps in one hall."""
        mine: dict[int, list[Rack]] = {}
        for rack in self.gpu:
            mine.setdefault(rack.group or 0, []).append(rack)
        blocks: list[list[Rack]] = []
        pods: list[int] = []
        per_pod = self._pod_groups()
        middle = self.groups // 2
        glue = False
        for group in range(self.groups):
            if group == middle and self.central:
                blocks.append(list(self.central))
                pods.append(-1)
                glue = False
            gpu = mine.get(group, [])
            half = len(gpu) // 2
            racks = gpu[:half] + self.row_net.get(group, []) + gpu[half:]
            if glue and blocks:
                blocks[-1].extend(racks)
            else:
                blocks.append(racks)
                pods.append(group // per_pod)
            glue = self._shares_leaf((group + 1) * self.group_racks * self.spr)
        if self.groups <= middle and self.central:
            blocks.append(list(self.central))
            pods.append(-1)
        return blocks, pods

    def _pod_groups(self) -> int:
        """Compute groups per pod of a three-tier compute fabric whose spines stand with their pod (each group
        one scalable unit); 1 otherwise (every group a pod of its own: blocks laid out as before)."""
        fab = self.fabrics.get("compute")
        if fab is None or len(fab.tiers) < 3 or self.group_racks * self.spr != fab.plane.su_servers or \
                placement(self.r.fabrics["compute"], "spine", self.spr, 3) != "row":
            return 1
        per_su = fab.plane.rails * fab.plane.leaves_per_rail
        return max(1, fab.plane.leaves_per_pod // per_su) if per_su and not fab.plane.leaves_per_pod % per_su else 1

    def _shares_leaf(self, server: int) -> bool:
        """A rack- or row-placed leaf of some fabric serves both server `server` - 1 and server `server`."""
        if not 0 < server < self.servers:
            return False
        for name, fab in self.fabrics.items():
            plane = fab.plane
            if not fab.links_per_server or not plane.servers_per_leaf:
                continue
            where = placement(self.r.fabrics[name], "leaf", self.spr, len(fab.tiers))
            within = server % plane.su_servers if plane.su_servers else server
            if where != "central" and within % plane.servers_per_leaf:
                return True
        return False


def plan_racks(resolved: Resolved, fabrics: dict[str, FabricTopology],
               oob: OobSizer | None = None) -> tuple[RackPlan, FabricTopology | None]:
    """Place every device: the data fabrics' switches, appliances and storage, then (given a sizer
    for it) the out-of-band network over what stands in each rack; then lay the racks out in floor order.
    The cyclic garbage collector is off meanwhile (a million-GPU site's 326,000 units make no cycles, and
    each full collection would walk them all again); reference counting frees what is let go."""
    with paused_gc():
        return _plan_racks(resolved, fabrics, oob)


def _plan_racks(resolved: Resolved, fabrics: dict[str, FabricTopology],
                oob: OobSizer | None) -> tuple[RackPlan, FabricTopology | None]:
    b = _Builder(resolved, fabrics)
    b.oob_w = oob.leaf_w if oob is not None and oob.where == "rack" else 0.0
    b.build_gpu_racks()
    b.place_switches()
    b.place_appliances()
    units: list[OobUnit] = []
    oob_places: dict[tuple[str, str], list[tuple[Rack, Unit]]] = {}
    oob_fabric: FabricTopology | None = None
    if oob is not None:
        units, oob_places, oob_fabric = place_oob(b, oob)
    racks, spots = b.floor()
    switches = {k: [(rack.index, unit.ru) for rack, unit in v] for k, v in {**b.switches, **oob_places}.items()}
    appliances = {k: [(rack.index, unit.ru) for rack, unit in v] for k, v in b.appliances.items()}
    units = [OobUnit(tuple(r.index for r in u.rack_objs), u.first_leaf, u.leaves, u.endpoints, (), u.zone)
             for u in units]
    plan = RackPlan(racks, [rack.index for rack in b.gpu], b.spr, resolved.server.rack_units, switches, appliances,
                    units, b.group_racks, b.rack_ru, spots)
    return plan, oob_fabric

