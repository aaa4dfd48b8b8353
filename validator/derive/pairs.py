"""Links counted by device pair: what the summary (describe, NET001) and the media tally (BOM, NET005)
need, without walking a 100k-GPU fabric link by link.

`link_pairs` yields (a_role, a_index, z_role, z_index, count, speed): `count` links between the same two
devices (servers of one rack to one leaf count as one pair: they share both racks). Its totals equal
those of `validator.derive.links.link_tuples` (tests/test_port_truth.py checks it on every example).
"""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.facts import fact
from validator.derive.links import appliance_links, oob_links, server_slots
from validator.expand.sizing import PlaneSize
from validator.expand.topology import Topology

PairTuple = tuple[str, int, str, int, int, float]


def link_pairs(topology: Topology, fabric: str) -> Iterator[PairTuple]:
    fab = topology.fabrics[fabric]
    if not fab.buildable:
        return
    if fabric == "oob":
        for a_role, a_idx, _ap, z_role, z_idx, _zp, s in oob_links(topology, fab):
            yield a_role, a_idx, z_role, z_idx, 1, s
    else:
        if fab.links_per_server:
            yield from _server_pairs(topology, fabric)
        for a_role, a_idx, _ap, z_role, z_idx, _zp, s in appliance_links(topology, fab):
            yield a_role, a_idx, z_role, z_idx, 1, s
    if fabric == "oob":
        for zone in fab.zone_planes():
            yield from _uplink_pairs(zone.plane, 0, (zone.leaf_base, zone.spine_base, zone.core_base))
        return
    for p in range(fab.planes):
        yield from _uplink_pairs(fab.plane, p)


def _server_pairs(topology: Topology, fabric: str) -> Iterator[PairTuple]:
    """Server links aggregated per GPU rack and leaf (the first server of the rack names the pair)."""
    fab = topology.fabrics[fabric]
    plane = fab.plane
    leaves = plane.tiers[0].count
    slots = server_slots(topology, fabric)
    per_su = plane.rails * plane.leaves_per_rail
    spl, lpr, su_size = plane.servers_per_leaf, plane.leaves_per_rail, plane.su_servers
    offsets = [p * leaves + rail * lpr for p, rail, _k in slots]
    per_rack = topology.racks.servers_per_rack
    speed = fab.speed_gbps
    for first in range(0, topology.servers, per_rack):
        counts: dict[int, int] = {}
        for s in range(first, min(topology.servers, first + per_rack)):
            su, pos = divmod(s, su_size)
            base = su * per_su + pos // spl
            for off in offsets:
                counts[base + off] = counts.get(base + off, 0) + 1
        for leaf, n in counts.items():
            yield "server", first, "leaf", leaf, n, speed


def _uplink_pairs(plane: PlaneSize, p: int, bases: tuple[int, int, int] | None = None) -> Iterator[PairTuple]:
    tiers = plane.tiers
    if len(tiers) < 2:
        return
    leaf, spine = tiers[0], tiers[1]
    three = len(tiers) == 3
    per_pod, spines = plane.leaves_per_pod, plane.spines_per_pod
    up = leaf.up_ports
    lb, sb = (bases[0], bases[1]) if bases else (p * leaf.count, p * spine.count)
    share = [up // spines + (1 if j < up % spines else 0) for j in range(spines)]
    for i in range(leaf.count):
        pod = i // per_pod if three else 0
        own = plane.leaf_uplinks(i)     # a multiple of the spines, or the tier's count (expand/growth.py)
        for j in range(spines):
            n = share[j] if own == up else own // spines
            if n:
                yield "leaf", lb + i, "spine", sb + pod * spines + j, n, leaf.up_speed_gbps
    if not three:
        return
    core = tiers[2]
    per_group, s_up = plane.cores_per_group, spine.up_ports
    cshare = [s_up // per_group + (1 if c < s_up % per_group else 0) for c in range(per_group)]
    cb = bases[2] if bases else p * core.count
    for g in range(spine.count):
        j = g % spines
        own = plane.spine_uplinks(g)     # a multiple of the cores of a group, or the tier's count
        for c in range(per_group):
            n = cshare[c] if own == s_up else own // per_group
            if n:
                yield "spine", sb + g, "core", cb + j * per_group + c, n, spine.up_speed_gbps


@fact
class Bundle:
    """`count` links of one kind: from devices of role `a` to the tier `z` above."""

    fabric: str
    a: str
    z: str
    count: int
    speed_gbps: float


@fact
class Busiest:
    """The switch of a tier with the most ports in use, and how many it has."""

    role: str
    index: int
    name: str
    down: int
    up: int
    capacity: int       # logical ports the tier's layout reserves per switch


@fact
class LinkSummary:
    """What one pass over a fabric's links says: bundles (for describe), the busiest switch per tier."""

    fabric: str
    links: int
    bundles: tuple[Bundle, ...]
    busiest: tuple[Busiest, ...]


class Usage:
    """Links by bundle and ports in use per switch, accumulated pair by pair (one fabric)."""

    def __init__(self, topology: Topology, fabric: str) -> None:
        self.topology, self.fabric = topology, fabric
        fab = topology.fabrics[fabric]
        self.bundles: dict[tuple[str, str, float], int] = {}
        self.down: dict[str, list[int]] = {t.role: [0] * fab.count(t.role) for t in fab.tiers}
        self.up: dict[str, list[int]] = {t.role: [0] * fab.count(t.role) for t in fab.tiers}
        self.total = 0

    def add(self, a_role: str, a_idx: int, z_role: str, z_idx: int, n: int, speed: float) -> None:
        self.total += n
        key = (a_role.split("/")[0] + "-mgmt" if "/" in a_role else a_role, z_role, speed)
        self.bundles[key] = self.bundles.get(key, 0) + n
        self.down[z_role][z_idx] += n
        if a_role in self.up:
            self.up[a_role][a_idx] += n

    def summary(self) -> LinkSummary:
        fab = self.topology.fabrics[self.fabric]
        busiest = []
        for t in fab.tiers:
            counts = [d + u for d, u in zip(self.down[t.role], self.up[t.role], strict=True)]
            if not counts:
                continue
            i = max(range(len(counts)), key=lambda k: (counts[k], -k))
            busiest.append(Busiest(t.role, i, fab.namer(t.role)(i), self.down[t.role][i], self.up[t.role][i],
                                   t.down_ports + t.up_ports))
        bundles = tuple(Bundle(self.fabric, a, z, n, s) for (a, z, s), n in self.bundles.items())
        return LinkSummary(self.fabric, self.total, bundles, tuple(busiest))


def summarize(topology: Topology, fabric: str) -> LinkSummary:
    """Count a fabric's links by bundle and its switches' used ports, in one pass over the pairs."""
    usage = Usage(topology, fabric)
    for pair in link_pairs(topology, fabric):
        usage.add(*pair)
    return usage.summary()
