"""Where every device sits: racks in rows, and the rack and rack unit of each server and switch.

Placement (docs/bom.md): GPU racks in server order; after the GPU racks of each compute group (a
scalable unit of a rail-optimized fabric, or the servers of one compute leaf) comes that group's
network rack, holding the leaves of every fabric that serve the group's servers. Spines, cores,
appliances (storage nodes, UFM) and the leaves that serve only appliances or management ports sit
in central network racks after all groups. Racks fill rows of `racks_per_row` in that order. Cable
length = horizontal distance between the racks plus a vertical run at each end; inside one rack, the
in-rack length.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from validator.base.resources import load_data
from validator.expand.topology import Topology, link_tuples, switch_group


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
        self.group_servers = max(1, topology.fabrics["compute"].sizing.group_servers) if "compute" in \
            topology.fabrics else max(1, topology.servers)
        self.groups = max(1, topology.racks.group_network_racks)
        self.central_start = topology.racks.gpu_racks + topology.racks.group_network_racks

    def group_rack(self, group: int) -> int:
        """The group's network rack comes right after the GPU rack holding the group's last server."""
        last = min(self.topology.servers, (group + 1) * self.group_servers) - 1
        return last // self.servers_per_rack + 1 + group

    def server(self, s: int) -> Place:
        gpu_rack = s // self.servers_per_rack
        # network racks of the groups whose last server sits in an earlier GPU rack come before it
        before = min(self.groups - 1, gpu_rack * self.servers_per_rack // self.group_servers)
        return Place(gpu_rack + before, (s % self.servers_per_rack) * self.server_ru + 1)

    @cached_property
    def _switch_places(self) -> dict[tuple[str, str], list[Place]]:
        places: dict[tuple[str, str], list[Place]] = {}
        group_ru = [0] * self.groups
        central_ru = 0
        for fabric, fab in self.topology.fabrics.items():
            first = self._first_endpoints(fabric) if fabric == "oob" else {}
            for tier in fab.tiers:
                ru = tier.switch.rack_units or 1
                out = []
                for i in range(tier.count):
                    g = switch_group(self.topology, fabric, tier.role, i)
                    if g is None and i in first and tier.role == "leaf":
                        role, index = first[i]   # an OOB leaf of management ports: with those switches
                        other, other_tier = role.split("/")
                        g = switch_group(self.topology, other, other_tier, index)
                    if g is not None:
                        out.append(Place(self.group_rack(g), group_ru[g] + 1))
                        group_ru[g] += ru
                    else:
                        rack, ru_at = divmod(central_ru, self.rack_ru)
                        out.append(Place(self.central_start + rack, ru_at + 1))
                        central_ru += ru
                places[(fabric, tier.role)] = out
        return places

    def _first_endpoints(self, fabric: str) -> dict[int, tuple[str, int]]:
        """Leaf -> the first management port (switch role, index) it serves."""
        first: dict[int, tuple[str, int]] = {}
        for a_role, a_idx, _ap, z_role, z_idx, _zp, _s in link_tuples(self.topology, fabric):
            if z_role == "leaf" and "/" in a_role and z_idx not in first:
                first[z_idx] = (a_role, a_idx)
        return first

    def switch(self, fabric: str, role: str, index: int) -> Place:
        return self._switch_places[(fabric, role)][index]

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
