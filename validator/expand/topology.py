"""The concrete topology of a resolved design: servers, NVLink domains and, per
fabric, its planes, switch tiers and the names of its devices.

Devices are counts and index ranges, not objects: a 100k-GPU design is a few dozen numbers here.
The links between them are made by `validator.derive.links`, which every later stage reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.expand.fabric import SWITCH_ROLES, FabricTopology
from validator.expand.growth import spine_floor
from validator.expand.oob import OobSizer
from validator.expand.port_power import PortPower
from validator.expand.racks import RackPlan, plan_racks
from validator.expand.sizing import Problem, placement, planes_and_rails, size_fabric
from validator.resolve.resolved import FABRIC_ROLES, Resolved

if TYPE_CHECKING:
    import networkx as nx


@dataclass
class Topology:
    resolved: Resolved
    servers: int
    gpus: int
    nvlink_domain_gpus: int
    nvlink_domains: int
    fabrics: dict[str, FabricTopology]
    racks: RackPlan
    storage_nodes: int

    @property
    def gpu_racks(self) -> int:
        return len(self.racks.gpu_rack_at)

    @property
    def switch_count(self) -> int:
        return sum(f.switches for f in self.fabrics.values())

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.fabrics.values() for p in f.problems]

    @property
    def buildable(self) -> bool:
        return all(f.buildable for f in self.fabrics.values())

    def nvlink_domain_of(self, gpu: int) -> int:
        """The NVLink domain of GPU `gpu` (GPUs numbered server by server from 0)."""
        if not 0 <= gpu < self.gpus:
            raise IndexError(f"GPU {gpu} of {self.gpus}")
        return gpu // self.nvlink_domain_gpus

    def server_of(self, gpu: int) -> int:
        return gpu // self.resolved.server.gpus

    def it_power_w(self) -> dict[str, float | None]:
        """IT power of servers and switches (optics are added by the BOM). None: a figure is unknown."""
        return _it_power(self)

    def graph(self) -> nx.MultiGraph:
        """Device groups as nodes (with counts), tier-to-tier adjacency as edges: reachability at any scale."""
        import networkx as nx

        g = nx.MultiGraph()
        g.add_node("server", count=self.servers, kind="server")
        for fab in self.fabrics.values():
            for t in fab.tiers:
                g.add_node(f"{fab.name}/{t.role}", count=fab.count(t.role), kind="switch", switch=t.switch.id)
            if fab.links_per_server:
                g.add_edge("server", f"{fab.name}/leaf", fabric=fab.name)
            for lower, upper in zip(fab.tiers, fab.tiers[1:], strict=False):
                g.add_edge(f"{fab.name}/{lower.role}", f"{fab.name}/{upper.role}", fabric=fab.name)
        return g


def _it_power(topology: Topology) -> dict[str, float | None]:
    server_w = topology.resolved.server.max_power_w
    switch_w: float | None = 0.0
    for fab in topology.fabrics.values():
        for t in fab.tiers:
            w = t.switch.power_max_w or t.switch.power_typical_w
            switch_w = None if (w is None or switch_w is None) else switch_w + w * fab.count(t.role)
    servers = None if server_w is None else server_w * topology.servers
    total = None if servers is None or switch_w is None else servers + switch_w
    return {"servers": servers, "switches": switch_w, "total": total}


def mgmt_ports(fabrics: dict[str, FabricTopology]) -> int:
    """Switch management ports of the data fabrics (they land on the out-of-band network)."""
    return sum(fab.count(t.role) * t.switch.mgmt_ports for fab in fabrics.values() for t in fab.tiers)


def build_topology(resolved: Resolved) -> Topology:
    design = resolved.design
    servers = design.compute.count
    storage_nodes = design.storage.nodes.count if design.storage and design.storage.nodes else 0
    per_rack = design.compute.servers_per_rack
    fabrics: dict[str, FabricTopology] = {}
    for name in FABRIC_ROLES:
        fab = resolved.fabrics.get(name)
        if fab is None or not fab.tiers or name == "oob":
            continue
        extra = sum(e.count * e.ports for e in fab.spec.extra_endpoints)
        if name == "storage" and design.storage and design.storage.nodes:
            extra += design.storage.nodes.count * design.storage.nodes.ports
        size = size_fabric(fab, servers, per_rack, resolved.server.gpus, extra,
                           min_spines=spine_floor(design.thresholds, name, str(design.kind)))
        fabrics[name] = FabricTopology(name, str(fab.spec.type), str(fab.spec.topology), fab.spec.speed_gbps, size,
                                       fab.links_per_server, extra)
    plan, oob = plan_racks(resolved, fabrics, _oob_sizer(resolved))
    if oob is not None:
        fabrics["oob"] = oob
    gpus = resolved.gpus
    domain = resolved.nvlink_domain_gpus
    return Topology(resolved, servers, gpus, domain, math.ceil(gpus / domain), fabrics, plan, storage_nodes)


def _oob_sizer(resolved: Resolved) -> OobSizer | None:
    """How to size the out-of-band network once the rack plan knows what stands where."""
    fab = resolved.fabrics.get("oob")
    if fab is None or not fab.tiers:
        return None
    design = resolved.design
    per_rack, gpus = design.compute.servers_per_rack, resolved.server.gpus
    probe = size_fabric(fab, 0, per_rack, gpus, 1)
    system = resolved.server.rack_system

    def size(endpoints: int, leaves: int) -> FabricTopology:
        sized = size_fabric(fab, 0, per_rack, gpus, endpoints, leaf_count=leaves)
        return FabricTopology("oob", str(fab.spec.type), str(fab.spec.topology), fab.spec.speed_gbps, sized, 0,
                              endpoints)

    leaf = probe.plane.tiers[0]
    leaf_w = (leaf.switch.power_max_w or leaf.switch.power_typical_w or 0.0) + PortPower(resolved.catalog).switch(leaf)
    return OobSizer(leaf.down_ports, placement(fab, "leaf", per_rack), system.mgmt_switches if system else 0,
                    fab.links_per_server, size, leaf_w, fab.spec.zones.racks if fab.spec.zones else None)


__all__ = ["SWITCH_ROLES", "FabricTopology", "Problem", "Topology", "build_topology", "mgmt_ports",
           "planes_and_rails"]
