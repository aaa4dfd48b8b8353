"""Stage 5: the concrete topology of a resolved design.

Devices are kept as groups with counts (servers, each fabric's tiers); individual links, with both
endpoints, ports, racks and lengths, are generated on demand by `iter_links` so that a 100k-GPU
design never holds every link object at once. The networkx graph holds one node per device group
and one edge per link bundle: enough for reachability questions, small at any scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from validator.expand.sizing import Sizing, TierSize, size_fabric
from validator.resolve.resolved import FABRIC_ROLES, Resolved

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class LinkBundle:
    """`count` links of one kind: from devices of group `a` (lower tier) to group `z`."""

    fabric: str
    a: str            # 'server', 'storage', an extra endpoint name, or a tier role
    z: str            # a tier role
    count: int
    speed_gbps: float


@dataclass
class FabricTopology:
    name: str
    type: str
    topology: str
    speed_gbps: float
    sizing: Sizing
    bundles: list[LinkBundle]

    @property
    def tiers(self) -> list[TierSize]:
        return self.sizing.tiers

    def tier(self, role: str) -> TierSize | None:
        return next((t for t in self.tiers if t.role == role), None)

    @property
    def links(self) -> int:
        return sum(b.count for b in self.bundles)

    @property
    def switches(self) -> int:
        return sum(t.count for t in self.tiers)


@dataclass
class Racks:
    gpu_racks: int
    network_racks: int
    servers_per_rack: int
    rack_units: int
    gpu_rack_units_used: int
    network_rack_units: int
    group_network_racks: int = 0      # one per compute group (SU), holding the leaves of every fabric
    central_network_racks: int = 0    # spines and cores


@dataclass
class Topology:
    resolved: Resolved
    servers: int
    gpus: int
    nvlink_domain_gpus: int
    nvlink_domains: int
    fabrics: dict[str, FabricTopology]
    racks: Racks
    storage_nodes: int

    @property
    def switch_count(self) -> int:
        return sum(f.switches for f in self.fabrics.values())

    def nvlink_domain_of(self, gpu: int) -> int:
        """The NVLink domain of GPU `gpu` (GPUs numbered server by server from 0)."""
        if not 0 <= gpu < self.gpus:
            raise IndexError(f"GPU {gpu} of {self.gpus}")
        return gpu // self.nvlink_domain_gpus

    def server_of(self, gpu: int) -> int:
        return gpu // self.resolved.server.gpus

    def graph(self) -> nx.MultiGraph:
        """Device groups as nodes (with counts), link bundles as edges (with counts and speed)."""
        import networkx as nx

        g = nx.MultiGraph()
        g.add_node("server", count=self.servers, kind="server")
        if self.storage_nodes:
            g.add_node("storage", count=self.storage_nodes, kind="storage")
        for fab in self.fabrics.values():
            for t in fab.tiers:
                g.add_node(f"{fab.name}/{t.role}", count=t.count, kind="switch", switch=t.switch.id)
            for b in fab.bundles:
                a = b.a if b.a in ("server", "storage") else f"{fab.name}/{b.a}"
                if a not in g:
                    g.add_node(a, count=1, kind="endpoint")
                g.add_edge(a, f"{fab.name}/{b.z}", fabric=fab.name, count=b.count, speed_gbps=b.speed_gbps)
        return g

    def it_power_w(self) -> dict[str, float | None]:
        """IT power of servers and switches (optics are added by the BOM). None: a figure is unknown."""
        server_w = self.resolved.server.max_power_w
        switch_w: float | None = 0.0
        for fab in self.fabrics.values():
            for t in fab.tiers:
                w = t.switch.power_max_w or t.switch.power_typical_w
                switch_w = None if (w is None or switch_w is None) else switch_w + w * t.count
        servers = None if server_w is None else server_w * self.servers
        total = None if servers is None or switch_w is None else servers + switch_w
        return {"servers": servers, "switches": switch_w, "total": total}


def build_topology(resolved: Resolved) -> Topology:
    design = resolved.design
    servers = design.compute.count
    storage_nodes = design.storage.nodes.count if design.storage and design.storage.nodes else 0
    fabrics: dict[str, FabricTopology] = {}
    for name in FABRIC_ROLES:
        fab = resolved.fabrics.get(name)
        if fab is None or not fab.tiers:
            continue
        extra = 0
        if name == "storage" and design.storage and design.storage.nodes:
            extra = design.storage.nodes.count * design.storage.nodes.ports
        if name == "oob":
            extra = sum(t.count * t.switch.mgmt_ports for f in fabrics.values() for t in f.tiers)
            extra += storage_nodes
        sizing = size_fabric(fab, servers, extra)
        fabrics[name] = FabricTopology(name, str(fab.spec.type), str(fab.spec.topology), fab.spec.speed_gbps,
                                       sizing, _bundles(name, fab.links_per_server * servers, sizing, design,
                                                        storage_nodes))
    gpus = resolved.gpus
    domain = resolved.nvlink_domain_gpus
    return Topology(resolved, servers, gpus, domain, math.ceil(gpus / domain), fabrics,
                    _racks(resolved, fabrics), storage_nodes)


def _bundles(name: str, server_links: int, sizing: Sizing, design: object, storage_nodes: int) -> list[LinkBundle]:
    from validator.read.model import Design

    assert isinstance(design, Design)
    fab = getattr(design.fabrics, name)
    out: list[LinkBundle] = []
    leaf = sizing.tiers[0]
    if server_links:
        out.append(LinkBundle(name, "server", "leaf", server_links, fab.speed_gbps))
    for extra in fab.extra_endpoints:
        out.append(LinkBundle(name, extra.name, "leaf", extra.count * extra.ports, fab.speed_gbps))
    if name == "storage" and design.storage and design.storage.nodes:
        out.append(LinkBundle(name, "storage", "leaf", storage_nodes * design.storage.nodes.ports,
                              fab.speed_gbps))
    if name == "oob" and sizing.extra_links:
        out.append(LinkBundle(name, "switch-mgmt", "leaf", sizing.extra_links - storage_nodes, fab.speed_gbps))
        if storage_nodes:
            out.append(LinkBundle(name, "storage", "leaf", storage_nodes, fab.speed_gbps))
    for lower, upper in zip(sizing.tiers, sizing.tiers[1:], strict=False):
        out.append(LinkBundle(name, lower.role, upper.role, lower.up_used, lower.up_speed_gbps))
    del leaf
    return [b for b in out if b.count > 0]


def _racks(resolved: Resolved, fabrics: dict[str, FabricTopology]) -> Racks:
    """GPU racks, plus one network rack per compute group (SU) for the leaves of every fabric and central
    network racks for spines and cores (the placement docs/bom.md describes)."""
    design = resolved.design
    per_rack = design.compute.servers_per_rack
    servers = design.compute.count
    gpu_racks = math.ceil(servers / per_rack)
    rack_units = resolved.rack.rack_units or 0
    extra = resolved.server.rack_system.extra_rack_units if resolved.server.rack_system else 0
    used = per_rack * resolved.server.rack_units + extra
    compute = fabrics.get("compute")
    groups = math.ceil(servers / max(1, compute.sizing.group_servers)) if compute else 0
    central_ru = sum((t.switch.rack_units or 1) * t.count for f in fabrics.values() for t in f.tiers
                     if t.role != "leaf")
    for name, f in fabrics.items():   # leaves that serve only appliances or management ports
        links = resolved.fabrics[name].links_per_server
        leaf = f.tiers[0]
        if f.sizing.rails == 1 and leaf.count:
            serving = math.ceil(servers * links / max(1, leaf.down_ports)) if links else 0
            central_ru += max(0, leaf.count - serving) * (leaf.switch.rack_units or 1)
    central = math.ceil(central_ru / rack_units) if rack_units and central_ru else 0
    switch_ru = sum((t.switch.rack_units or 1) * t.count for f in fabrics.values() for t in f.tiers)
    return Racks(gpu_racks, groups + central, per_rack, rack_units, used, switch_ru, groups, central)


@dataclass(frozen=True)
class Link:
    """One cable run: A end (lower tier) to Z end. Indices number devices within their role."""

    fabric: str
    a_device: str
    a_port: int | str
    z_device: str
    z_port: int
    speed_gbps: float
    a_role: str
    z_role: str
    a_index: int
    z_index: int


# A link without names: (a_role, a_index, a_port, z_role, z_index, z_port, speed_gbps). Ports are 1-based;
# a switch management port is "mgmt". The BOM, the rules and the configs count over these tuples.
LinkTuple = tuple[str, int, "int | str", str, int, int, float]


def link_tuples(topology: Topology, fabric: str) -> Iterator[LinkTuple]:
    """Every link of a fabric, in a stable order, as plain tuples (cheap at 100k-GPU scale).

    Rail-optimized: NIC i of every server in SU u lands on the rail-i leaf of SU u (or the rail the
    design's `nic_to_rail` names). Uplinks spread evenly: leaf uplink k goes to spine k mod S.
    Out-of-band: every server BMC, then the management port of every switch of the other fabrics.
    """
    fab = topology.fabrics[fabric]
    spec = getattr(topology.resolved.design.fabrics, fabric)
    sizing = fab.sizing
    leaf = sizing.tiers[0]
    next_port = [0] * leaf.count
    links_per_server = topology.resolved.fabrics[fabric].links_per_server
    rails = sizing.rails
    mapping = spec.nic_to_rail or list(range(links_per_server))
    speed = fab.speed_gbps
    leaves, down, group_servers = leaf.count, leaf.down_ports, sizing.group_servers
    if links_per_server:
        rail_of = [(mapping[nic] if nic < len(mapping) else nic) % rails for nic in range(links_per_server)]
        for s in range(topology.servers):
            for nic in range(links_per_server):
                if rails > 1:
                    leaf_idx = ((s // group_servers) * rails + rail_of[nic]) % leaves
                else:
                    leaf_idx = ((s * links_per_server + nic) // down) % leaves
                next_port[leaf_idx] += 1
                yield ("server", s, nic + 1, "leaf", leaf_idx, next_port[leaf_idx], speed)
    cursor = 0
    for role, index, port in _other_endpoints(topology, fabric):
        while cursor < leaves - 1 and next_port[cursor] >= down:
            cursor += 1
        next_port[cursor] += 1
        yield (role, index, port, "leaf", cursor, next_port[cursor], speed)
    for lower, upper in zip(sizing.tiers, sizing.tiers[1:], strict=False):
        yield from _uplinks(lower, upper, sizing)


def _other_endpoints(topology: Topology, fabric: str) -> Iterator[tuple[str, int, int | str]]:
    """Non-server endpoints, which fill the free leaf ports lowest leaf first: (role, index, port)."""
    spec = getattr(topology.resolved.design.fabrics, fabric)
    for e in spec.extra_endpoints:
        for i in range(e.count):
            for p in range(e.ports):
                yield e.name, i, p + 1
    storage = topology.resolved.design.storage
    if fabric == "oob":
        # management ports grouped by the network rack their switch sits in, the last group first (it
        # shares the last server leaf's spare ports), spines and cores after all groups, so each rack's
        # ports share nearby OOB leaves; central appliances last
        ports = [(switch_group(topology, name, tier.role, i), f"{name}/{tier.role}", i)
                 for name, other in topology.fabrics.items() if name != "oob"
                 for tier in other.tiers for i in range(tier.count)]
        ports.sort(key=lambda p: (p[0] is None, -(p[0] or 0)))
        for _, role, i in ports:
            yield role, i, "mgmt"
    if storage and storage.nodes and fabric in ("storage", "oob"):
        ports_per_node = storage.nodes.ports if fabric == "storage" else 1
        for i in range(storage.nodes.count):
            for p in range(ports_per_node):
                yield "storage", i, p + 1


def switch_group(topology: Topology, fabric: str, role: str, index: int) -> int | None:
    """The compute group (SU) whose servers a leaf serves; None for spines, cores and leaves that serve
    no server (they sit centrally). Rail leaves go by SU, other leaves by their first server."""
    if role != "leaf":
        return None
    fab = topology.fabrics[fabric]
    compute = topology.fabrics.get("compute")
    group_servers = max(1, compute.sizing.group_servers) if compute else max(1, topology.servers)
    groups = max(1, math.ceil(topology.servers / group_servers))
    if fab.sizing.rails > 1:
        return min(groups - 1, index // fab.sizing.rails)
    links = topology.resolved.fabrics[fabric].links_per_server
    first = index * fab.tiers[0].down_ports // links if links else topology.servers
    return min(groups - 1, first // group_servers) if first < topology.servers else None


def device_namer(topology: Topology, fabric: str, role: str) -> Callable[[int], str]:
    """Name of device `index` of a role on a fabric (servers, switches, storage, appliances)."""
    if role == "server":
        return lambda i: f"node{i + 1:05d}"
    if role == "storage":
        return lambda i: f"storage{i + 1:04d}"
    if "/" in role:  # a switch of another fabric, by its management port
        other, tier = role.split("/")
        return _namer(other, tier, topology.fabrics[other].sizing)
    if role in ("leaf", "spine", "core"):
        return _namer(fabric, role, topology.fabrics[fabric].sizing)
    return lambda i: f"{fabric}-{role}{i + 1:04d}"


def iter_links(topology: Topology, fabric: str) -> Iterator[Link]:
    """Every link of a fabric with device names (for the cabling plan and the configurations)."""
    namers: dict[str, Callable[[int], str]] = {}

    def name(role: str, index: int) -> str:
        if role not in namers:
            namers[role] = device_namer(topology, fabric, role)
        return namers[role](index)

    for a_role, a_idx, a_port, z_role, z_idx, z_port, speed in link_tuples(topology, fabric):
        yield Link(fabric, name(a_role, a_idx), a_port, name(z_role, z_idx), z_port, speed, a_role, z_role,
                   a_idx, z_idx)


def _uplinks(lower: TierSize, upper: TierSize, sizing: Sizing) -> Iterator[LinkTuple]:
    if upper.role == "spine" and sizing.leaves_per_pod:
        group, targets = sizing.leaves_per_pod, max(1, upper.count // max(1, sizing.pods))
    else:
        group, targets = 0, upper.count
    up_port = [0] * upper.count
    core = upper.role == "core"
    for i in range(lower.count):
        base = (i // group) * targets if group else 0
        for k in range(lower.up_ports):
            j = ((i * lower.up_ports + k) if core else base + k % targets) % upper.count
            up_port[j] += 1
            yield (lower.role, i, lower.down_ports + k + 1, upper.role, j, up_port[j], lower.up_speed_gbps)


def _namer(fabric: str, role: str, sizing: Sizing) -> Callable[[int], str]:
    """Device names: `compute-leaf-su001-rail1` for rail leaves, `storage-spine0003` otherwise."""
    if role == "leaf" and sizing.rails > 1:
        rails = sizing.rails
        return lambda i: f"{fabric}-leaf-su{i // rails + 1:03d}-rail{i % rails + 1}"
    return lambda i: f"{fabric}-{role}{i + 1:04d}"


def device_names(topology: Topology, fabric: str, role: str) -> Iterator[str]:
    fab = topology.fabrics[fabric]
    tier = fab.tier(role)
    namer = _namer(fabric, role, fab.sizing)
    for i in range(tier.count if tier else 0):
        yield namer(i)
