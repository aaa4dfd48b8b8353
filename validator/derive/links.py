"""The link plan: every cable of every fabric, with both ends and their ports. The derive stage.

Every later output reads this one list: `describe` its counts, the BOM its media tally, `cabling` its
rows, `render` each switch's ports and neighbours. Links are generated on demand as plain tuples,
so a 100k-GPU design never holds them as objects:

    (a_role, a_index, a_port, z_role, z_index, z_port, speed_gbps)

A end = the lower tier (server, appliance, leaf, spine), Z end = the switch above it. Switch indices
count over every plane (plane-major); ports are 1-based logical ports of the switch at the link's
speed (`validator.expand.ports` places them in cages), a switch management port is "mgmt" (a switch
with several: "mgmt1", "mgmt2"...; the index of a management-port end counts ports, device x ports + k).

Ports are assigned by arithmetic from the sizing, not by counters, so the same port never comes
out twice and no port number exceeds what the sizing reserved (the property tests check both on
the links themselves):

- server s, link l: plane, rail and rail position from the NIC layout; leaf = rail group of the SU;
  leaf port = (position of s among the leaf's servers) x links per rail + k + 1;
- appliances take the free downlink ports, lowest leaf first, then their own leaves;
- leaf i uplink u -> spine u mod S (of its pod), at spine port (i's place in the pod) x ceil(U/S) + m + 1
  for its m-th link to that spine; spine -> core likewise, spine j of every pod to core group j.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from validator.base.facts import fact
from validator.expand.sizing import PlaneSize
from validator.expand.topology import SWITCH_ROLES, FabricTopology, Topology

LinkTuple = tuple[str, int, "int | str", str, int, int, float]


@fact
class Link:
    """One cable run with device names: A end (lower tier) to Z end."""

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


def server_slots(topology: Topology, fabric: str) -> list[tuple[int, int, int]]:
    """(plane, rail, position within the rail) of each of a server's links on a fabric, by link index.

    Links are numbered NIC by NIC: NIC n has `ports` physical ports, each giving `split` links at the
    fabric speed (a broken-out port), so its q-th link is l = n x ports x split + q. Planes take whole
    NICs (NIC n on plane n mod planes) or the links of each NIC (link q of every NIC on plane q mod planes).
    """
    fab = topology.fabrics[fabric]
    rf = topology.resolved.fabrics[fabric]
    spec = rf.spec
    links, planes = rf.links_per_server, fab.planes
    per_nic = links_per_nic(topology, fabric)
    plane = fab.plane
    out = []
    for link in range(links):
        nic, q = divmod(link, per_nic)
        if spec.topology == "rail-only":
            p, pos = link, 0
        elif spec.plane_of == "port" and planes > 1:
            p, pos = q % planes, nic * max(1, per_nic // planes) + q // planes
        else:
            p, pos = nic % planes, (nic // planes) * per_nic + q
        if spec.topology == "rail-optimized":
            mapping = spec.nic_to_rail
            rail = (mapping[pos] if mapping and pos < len(mapping) else pos) % plane.rails
            out.append((p, rail, 0))
        else:
            out.append((p, pos % plane.rails, pos // plane.rails))
    return out


def links_per_nic(topology: Topology, fabric: str) -> int:
    """Links one NIC of a server gives on a fabric (its ports times the breakout); 1 when they do not
    divide the server's links evenly. A server's link l belongs to NIC l // links_per_nic."""
    rf = topology.resolved.fabrics[fabric]
    per_nic = max(1, (rf.nic.ports if rf.nic else 1) * rf.ports_per_nic_port)
    return 1 if rf.links_per_server % per_nic else per_nic


def _leaf_servers(plane: PlaneSize, servers: int, leaf: int) -> int:
    """Servers cabled to server leaf `leaf` (local to its plane)."""
    per_su = plane.rails * plane.leaves_per_rail
    su, k = divmod(leaf, per_su)
    r = k % plane.leaves_per_rail
    present = min(plane.su_servers, servers - su * plane.su_servers)
    first = r * plane.servers_per_leaf
    return max(0, min(plane.servers_per_leaf, present - first))


def link_tuples(topology: Topology, fabric: str) -> Iterator[LinkTuple]:
    """Every link of a fabric in a stable order (servers, appliances, then tier by tier upwards)."""
    fab = topology.fabrics[fabric]
    if not fab.buildable:
        return
    if fabric == "oob":
        yield from oob_links(topology, fab)
        for zone in fab.zone_planes():
            yield from _uplinks(zone.plane, 0, (zone.leaf_base, zone.spine_base, zone.core_base))
        return
    plane = fab.plane
    leaf = plane.tiers[0]
    leaves = leaf.count
    speed = fab.speed_gbps
    if fab.links_per_server:
        slots = server_slots(topology, fabric)
        per_su = plane.rails * plane.leaves_per_rail
        spl, ppr, lpr, su_size = plane.servers_per_leaf, plane.ports_per_rail, plane.leaves_per_rail, plane.su_servers
        for s in range(topology.servers):
            su, pos = divmod(s, su_size)
            r, at = divmod(pos, spl)
            base = su * per_su + r
            for link, (p, rail, k) in enumerate(slots):
                yield ("server", s, link + 1, "leaf", p * leaves + base + rail * lpr, at * ppr + k + 1, speed)
    yield from appliance_links(topology, fab)
    for p in range(fab.planes):
        yield from _uplinks(plane, p)


def oob_links(topology: Topology, fab: FabricTopology) -> Iterator[LinkTuple]:
    """Management ports to the out-of-band leaves of their rack (or group), spread evenly over them.

    Servers and storage nodes fill each leaf from its first port up, round robin from the unit's first leaf;
    switches and appliances fill from the last port down, round robin from its last leaf. So adding servers
    moves no switch's management cable (a growth re-patches nothing). Where a leaf would run out of ports
    that way (a unit filled to the last port), the ports are given in one sequence instead."""
    speed = fab.speed_gbps
    capacity = fab.plane.tiers[0].down_ports if fab.plane.tiers else 0
    per = {role: mgmt_ports_of(topology, role) for unit in topology.racks.oob_units for role, _f, _c in unit.endpoints}

    def port_of(role: str, index: int) -> int | str:
        n = per[role]
        return 1 if role in ("server", "storage") else "mgmt" if n == 1 else f"mgmt{index % n + 1}"

    for unit in topology.racks.oob_units:
        hosts = [(r, i) for r, first, n in unit.endpoints if r in ("server", "storage")
                 for i in range(first, first + n)]
        others = [(r, i) for r, first, n in unit.endpoints if r not in ("server", "storage")
                  for i in range(first, first + n)]
        per_leaf = -(-len(hosts) // unit.leaves) + -(-len(others) // unit.leaves)
        if not capacity or per_leaf > capacity:
            for k, (role, index) in enumerate(hosts + others):
                yield (role, index, port_of(role, index), "leaf", unit.first_leaf + k % unit.leaves,
                       k // unit.leaves + 1, speed)
            continue
        for k, (role, index) in enumerate(hosts):
            yield (role, index, 1, "leaf", unit.first_leaf + k % unit.leaves, k // unit.leaves + 1, speed)
        for k, (role, index) in enumerate(others):
            leaf = unit.first_leaf + unit.leaves - 1 - k % unit.leaves
            yield (role, index, port_of(role, index), "leaf", leaf, capacity - k // unit.leaves, speed)


def mgmt_ports_of(topology: Topology, role: str) -> int:
    """Management ports of one device of a management-port role ("compute/spine"); 1 for any other role."""
    if "/" not in role:
        return 1
    other, tier_role = role.split("/")
    tier = topology.fabrics[other].tier(tier_role)
    return tier.switch.mgmt_ports if tier is not None and tier.switch.mgmt_ports else 1


def appliance_links(topology: Topology, fab: FabricTopology) -> Iterator[LinkTuple]:
    """Appliances fill free leaf downlink ports, lowest leaf first. With several planes their ports are dealt
    over the planes (port k of the list to plane k mod planes): each port is one cable, in one plane."""
    plane = fab.plane
    leaf = plane.tiers[0]
    endpoints = list(_appliances(topology, fab.name))
    if not endpoints:
        return
    used = [_leaf_servers(plane, topology.servers, i) * plane.ports_per_rail if i < plane.server_leaves else 0
            for i in range(leaf.count)]
    for p in range(fab.planes):
        cursor = 0
        next_port = list(used)
        for role, index, port in endpoints[p::fab.planes]:
            while next_port[cursor] >= leaf.down_ports:
                cursor += 1
            next_port[cursor] += 1
            yield (role, index, port, "leaf", p * leaf.count + cursor, next_port[cursor], fab.speed_gbps)


def _appliances(topology: Topology, fabric: str) -> Iterator[tuple[str, int, int | str]]:
    """Non-server endpoints of a fabric: (role, index, port)."""
    spec = getattr(topology.resolved.design.fabrics, fabric)
    for e in spec.extra_endpoints:
        for i in range(e.count):
            for p in range(e.ports):
                yield e.name, i, p + 1
    storage = topology.resolved.design.storage
    if fabric == "oob":
        for name, other in topology.fabrics.items():
            if name == "oob":
                continue
            for tier in other.tiers:
                per = tier.switch.mgmt_ports
                for i in range(other.count(tier.role) * per):
                    yield f"{name}/{tier.role}", i, "mgmt" if per == 1 else f"mgmt{i % per + 1}"
    if storage and storage.nodes and fabric in ("storage", "oob"):
        per_node = storage.nodes.ports if fabric == "storage" else 1
        for i in range(storage.nodes.count):
            for p in range(per_node):
                yield "storage", i, p + 1


def _uplinks(plane: PlaneSize, p: int, bases: tuple[int, int, int] | None = None) -> Iterator[LinkTuple]:
    """Leaf-spine (and spine-core) links of plane p; `bases`: the first leaf, spine and core of a zone."""
    tiers = plane.tiers
    if len(tiers) < 2:
        return
    leaf, spine = tiers[0], tiers[1]
    per_pod = plane.leaves_per_pod
    spines = plane.spines_per_pod
    up, down = leaf.up_ports, leaf.down_ports
    stride = math.ceil(up / spines)
    lb, sb = (bases[0], bases[1]) if bases else (p * leaf.count, p * spine.count)
    three = len(tiers) == 3
    for i in range(leaf.count):
        pod, q = divmod(i, per_pod) if three else (0, i)
        for u in range(plane.leaf_uplinks(i)):
            j, m = u % spines, u // spines
            yield ("leaf", lb + i, down + u + 1, "spine", sb + pod * spines + j, q * stride + m + 1,
                   leaf.up_speed_gbps)
    if not three:
        return
    core = tiers[2]
    per_group = plane.cores_per_group
    s_up, s_down = spine.up_ports, spine.down_ports
    stride = math.ceil(s_up / per_group)
    cb = bases[2] if bases else p * core.count
    for g in range(spine.count):
        pod, j = divmod(g, spines)
        for v in range(plane.spine_uplinks(g)):
            c, m = v % per_group, v // per_group
            yield ("spine", sb + g, s_down + v + 1, "core", cb + j * per_group + c, pod * stride + m + 1,
                   spine.up_speed_gbps)


def device_namer(topology: Topology, fabric: str, role: str) -> Callable[[int], str]:
    """Name of device `index` of a role on a fabric (servers, switches, storage, appliances)."""
    if role == "server":
        return lambda i: f"node{i + 1:05d}"
    if role == "storage":
        return lambda i: f"storage{i + 1:04d}"
    if role == "rack-system":
        per = topology.resolved.server.rack_system
        ports = per.mgmt_ports if per and per.mgmt_ports else 1
        return lambda i: f"rack{i // ports + 1:05d}-system-mgmt{i % ports + 1}"
    if "/" in role:  # a switch of another fabric, by its management ports (device x ports + k)
        other, tier = role.split("/")
        namer, n = topology.fabrics[other].namer(tier), mgmt_ports_of(topology, role)
        return namer if n == 1 else lambda i: namer(i // n)
    if role in SWITCH_ROLES:
        return topology.fabrics[fabric].namer(role)
    return lambda i: f"{fabric}-{role}{i + 1:04d}"


def iter_links(topology: Topology, fabric: str) -> Iterator[Link]:
    """Every link of a fabric with device names (the cabling plan and the configurations)."""
    namers: dict[str, Callable[[int], str]] = {}

    def name(role: str, index: int) -> str:
        if role not in namers:
            namers[role] = device_namer(topology, fabric, role)
        return namers[role](index)

    for a_role, a_idx, a_port, z_role, z_idx, z_port, speed in link_tuples(topology, fabric):
        yield Link(fabric, name(a_role, a_idx), a_port, name(z_role, z_idx), z_port, speed, a_role, z_role,
                   a_idx, z_idx)
