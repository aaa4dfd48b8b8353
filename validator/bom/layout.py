"""Where every device sits: racks in rows, and the rack and rack unit of each server and switch.

Placement (documented in docs/bom.md): GPU racks in server order; after the GPU racks of each compute
group (a scalable unit of a rail-optimized fabric, or the servers of one leaf) comes that group's
network rack with its compute leaves; every other switch (spines, cores, and the storage, in-band
and out-of-band fabrics) sits in central network racks after all groups. Racks fill rows of
`racks_per_row` in that order. Cable length = horizontal distance between the racks plus a vertical
run at each end; inside one rack, the in-rack length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from validator.resources import load_data
from validator.topology.build import Topology


@dataclass(frozen=True)
class Place:
    rack: int          # index in rack order
    ru: int            # lowest rack unit occupied (1-based)


class Layout:
    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        r = topology.resolved
        design_layout = r.design.site.layout
        data = {k: float(v["value"]) for k, v in load_data("defaults.yaml")["layout"].items()}
        self.racks_per_row = design_layout.racks_per_row if design_layout else int(data["racks_per_row"])
        self.rack_width = (design_layout.rack_width_m if design_layout and design_layout.rack_width_m
                           else data["rack_width_m"])
        self.row_pitch = (design_layout.row_pitch_m if design_layout and design_layout.row_pitch_m
                          else data["row_pitch_m"])
        self.slack = data["slack_per_end_m"]
        self.in_rack = data["in_rack_m"]
        self.servers_per_rack = r.design.compute.servers_per_rack
        self.server_ru = r.server.rack_units
        self.rack_ru = r.rack.rack_units or 48
        compute = topology.fabrics.get("compute")
        self.group_servers = compute.sizing.group_servers if compute else topology.servers
        self.rails = compute.sizing.rails if compute else 1
        self.groups = max(1, math.ceil(topology.servers / max(1, self.group_servers)))

    # ---------------------------------------------------------------- rack order

    def _group_rack_index(self, group: int) -> int:
        """The group's network rack comes right after the GPU rack holding the group's last server."""
        last = min(self.topology.servers, (group + 1) * self.group_servers) - 1
        return last // self.servers_per_rack + 1 + group

    def server(self, s: int) -> Place:
        gpu_rack = s // self.servers_per_rack
        # network racks of the groups whose last server sits in an earlier GPU rack come before it
        before = min(self.groups - 1, gpu_rack * self.servers_per_rack // max(1, self.group_servers))
        return Place(gpu_rack + before, (s % self.servers_per_rack) * self.server_ru + 1)

    @cached_property
    def central_start(self) -> int:
        return self._group_rack_index(self.groups - 1) + 1

    @cached_property
    def _central_slots(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(fabric, role) -> (first slot, RU per switch) in the central racks, packed in order."""
        slots: dict[tuple[str, str], tuple[int, int]] = {}
        cursor = 0
        for name, fab in self.topology.fabrics.items():
            for tier in fab.tiers:
                if name == "compute" and tier.role == "leaf":
                    continue
                ru = tier.switch.rack_units or 1
                slots[(name, tier.role)] = (cursor, ru)
                cursor += tier.count * ru
        return slots

    def switch(self, fabric: str, role: str, index: int) -> Place:
        if fabric == "compute" and role == "leaf":
            per_group = self.rails if self.rails > 1 else 1
            group = min(index // per_group, self.groups - 1)
            ru_each = self.topology.fabrics["compute"].tiers[0].switch.rack_units or 1
            return Place(self._group_rack_index(group), (index % per_group) * ru_each + 1)
        start, ru = self._central_slots[(fabric, role)]
        units = start + index * ru
        return Place(self.central_start + units // self.rack_ru, units % self.rack_ru + 1)

    @property
    def rack_count(self) -> int:
        return self.topology.racks.gpu_racks + self.topology.racks.network_racks

    def rack_name(self, rack: int) -> str:
        row, col = divmod(rack, self.racks_per_row)
        return f"R{row + 1:02d}-{col + 1:02d}"

    def distance_m(self, a: int, b: int) -> float:
        if a == b:
            return self.in_rack
        ra, ca = divmod(a, self.racks_per_row)
        rb, cb = divmod(b, self.racks_per_row)
        return abs(ca - cb) * self.rack_width + abs(ra - rb) * self.row_pitch + 2 * self.slack
