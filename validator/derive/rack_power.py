"""Power per rack, on the BOM's basis (the derive stage): what every rack draws from its feeds.

A rack's power is what is plugged into it:

- the devices standing in it (`validator.expand.racks`): servers at their maximum (GPUs, NICs and the
  rack system's NVLink switch trays and power shelves are inside that figure), switches at their
  maximum where published else typical, storage nodes at the design's figure, appliances (UFM...)
  unknown: the design gives them no power;
- the transceivers in those devices' cages (none at a switch whose maximum is with active modules in
  its cages: they are in the switch's figure), counted per switch and per rack as the BOM counts them;
- its share of the active cables (AOC, ACC, DAC): a cable's power shared by its links, each link's
  half at either end's rack (all of it when both ends are in the rack).

Nothing else of the BOM's IT power is left outside the racks: summed over racks this is the BOM's
servers + switches + optics + storage, and its cables up to the rounding to whole cables (a
twin-port cable carrying one link is bought whole). Racks, PDUs, CDUs and rear doors are facility
overhead (in the PUE), not rack power. A part with no power figure makes its rack's power unknown
(None, and `unknown` names it); `known_w` is then a lower bound. Never a zero for an unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from validator.derive.cabling import Plan
from validator.expand.racks import Rack, Unit
from validator.expand.topology import SWITCH_ROLES, Topology


@dataclass
class RackLoad:
    """What one rack draws (W), split by what draws it."""

    rack: int                     # floor index
    kind: str                     # gpu, network
    devices_w: float = 0.0        # known devices
    optics_w: float = 0.0         # transceivers in the rack's devices
    cables_w: float = 0.0         # the rack's share of active cables
    unknown: set[str] = field(default_factory=set)    # parts (or appliances) of unknown power

    @property
    def known_w(self) -> float:
        return self.devices_w + self.optics_w + self.cables_w

    @property
    def total_w(self) -> float | None:
        return None if self.unknown else self.known_w

    @property
    def total_kw(self) -> float | None:
        w = self.total_w
        return None if w is None else round(w / 1000, 3)


def optics_in_switch(topology: Topology, fabric: str, role: str) -> bool:
    """A switch whose maximum power is with every cage holding an active module: its optics are in it."""
    fab = topology.fabrics.get(fabric)
    tier = fab.tier(role) if fab and role in SWITCH_ROLES else None
    return bool(tier and tier.switch.power_max_w and tier.switch.power_max_includes_optics)


class RackPower:
    """Power per rack of one design (`Derived.rack_power`), read by the BOM, FAC001 and `clusterplan racks`."""

    def __init__(self, topology: Topology, plan: Plan) -> None:
        self.topology = topology
        self.loads = [RackLoad(rack.index, rack.kind) for rack in topology.racks.racks]
        for rack in topology.racks.racks:
            self._devices(rack)
        self._optics(plan)
        self._cables(plan)

    def __getitem__(self, rack: int) -> RackLoad:
        return self.loads[rack]

    def heaviest(self, kind: str) -> RackLoad | None:
        """The rack of a kind drawing the most (an unknown one first: it may draw more than any)."""
        racks = [r for r in self.loads if r.kind == kind]
        return max(racks, key=lambda r: (bool(r.unknown), r.known_w, -r.rack), default=None)

    def kw(self, kind: str) -> float | None:
        """kW of the heaviest rack of a kind (None: unknown; 0.0 when there is no such rack)."""
        rack = self.heaviest(kind)
        return 0.0 if rack is None else rack.total_kw

    def total_kw(self, racks: Iterable[RackLoad] | None = None) -> float | None:
        chosen = list(self.loads if racks is None else racks)
        if any(r.unknown for r in chosen):
            return None
        return round(sum(r.known_w for r in chosen) / 1000, 3)

    def _devices(self, rack: Rack) -> None:
        load = self.loads[rack.index]
        for unit in rack.units:
            if unit.kind == "cdu":
                continue        # facility power (in the PUE), not the rack's
            if unit.power_w is None:
                load.unknown.add(self._part(unit))
            else:
                load.devices_w += unit.power_w

    def _part(self, unit: Unit) -> str:
        r = self.topology.resolved
        if unit.kind in ("server", "rack-system"):
            return r.server.id
        if unit.kind == "switch":
            tier = self.topology.fabrics[unit.fabric].tier(unit.role)
            return tier.switch.id if tier else f"{unit.fabric}-{unit.role}"
        if unit.kind == "storage":
            return "storage-node"
        return f"{unit.fabric}-{unit.role} (appliance)"

    def _optics(self, plan: Plan) -> None:
        topology, catalog = self.topology, self.topology.resolved.catalog
        tally = plan.tally
        places = topology.racks.switches
        for (fabric, part, role), devices in tally.switch_xcvr.items():
            x = catalog.transceiver(part)
            watts = 0.0 if optics_in_switch(topology, fabric, role) else x.power_w
            spots = places[(fabric, role)]
            for index, modules in devices.items():
                self._add_optics(spots[index][0], part, watts, modules)
        for (_fabric, part, _role, rack), modules in tally.node_xcvr.items():
            self._add_optics(rack, part, catalog.transceiver(part).power_w, modules)

    def _add_optics(self, rack: int, part: str, watts: float | None, modules: int) -> None:
        load = self.loads[rack]
        if watts is None:
            load.unknown.add(part)
        else:
            load.optics_w += watts * modules

    def _cables(self, plan: Plan) -> None:
        catalog = self.topology.resolved.catalog
        loads = self.loads
        per_part: dict[str, float | None] = {}      # a cable's power per link, once per part (None: unknown)
        for (_fabric, part, _length, a, z), links in plan.tally.cable_runs.items():
            if part in per_part:
                per_link = per_part[part]
            else:
                cable = catalog.find("cable", part)
                per_link = per_part[part] = None if cable is None or cable.power_w is None else \
                    cable.power_w / cable.links_per_cable
            if per_link is None:
                loads[a].unknown.add(part)
                loads[z].unknown.add(part)
                continue
            loads[a].cables_w += per_link * links / 2
            loads[z].cables_w += per_link * links / 2
