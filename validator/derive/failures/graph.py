"""Who is cabled to whom on one fabric, indexed for failure analysis (the derive stage).

Built in one pass over the fabric's link plan (`validator.derive.links.link_tuples`), so it holds what the
BOM, the cabling plan and the configurations hold: server links by leaf, appliance and management-port
links by leaf, and the parallel links between each pair of switches. Nothing here is sized again.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from validator.derive.links import link_tuples, links_per_nic
from validator.expand.topology import Topology

Switch = tuple[str, int]          # (role, index over every plane)
Endpoint = tuple[str, int]        # (role, index) of an appliance, storage node or management port

TIER_OF = {"leaf": "leaf-spine", "spine": "spine-core"}     # the bundle a switch's uplinks belong to
ENDPOINT_TIER = "endpoint-leaf"


@dataclass
class FabricGraph:
    name: str
    tiers: tuple[str, ...]                         # switch roles, leaf first
    links_per_server: int
    per_nic: int                                   # a server's link l is on NIC l // per_nic
    server_leaves: dict[int, list[int]] = field(default_factory=dict)       # server -> leaf of each link
    leaf_servers: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    endpoint_leaves: dict[Endpoint, list[int]] = field(default_factory=lambda: defaultdict(list))
    leaf_endpoints: dict[int, list[Endpoint]] = field(default_factory=lambda: defaultdict(list))
    up: dict[Switch, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))     # lower -> {upper: n}
    down: dict[Switch, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))   # upper -> {lower: n}
    links: dict[str, int] = field(default_factory=lambda: defaultdict(int))          # bundle -> links
    speed: dict[str, float] = field(default_factory=dict)                            # bundle -> Gb/s per link
    counts: dict[str, int] = field(default_factory=dict)                             # switches per role
    pod_of: dict[int, int] = field(default_factory=dict)        # three tiers: spine -> pod
    pods: list[tuple[frozenset[int], tuple[int, ...], int]] = field(default_factory=list)  # leaves, spines, uplinks

    def upper_of(self, role: str) -> str | None:
        i = self.tiers.index(role)
        return self.tiers[i + 1] if i + 1 < len(self.tiers) else None

    def lower_of(self, role: str) -> str | None:
        i = self.tiers.index(role)
        return self.tiers[i - 1] if i > 0 else None

    def uplinks(self, switch: Switch) -> int:
        return sum(self.up.get(switch, {}).values())

    @property
    def leaves(self) -> int:
        return self.counts.get("leaf", 0)

    def capacity_gbps(self, bundle: str) -> float:
        return self.links.get(bundle, 0) * self.speed.get(bundle, 0.0)


def fabric_graph(topology: Topology, fabric: str) -> FabricGraph:
    """The cabling of one fabric, indexed by device (one pass over its link plan)."""
    fab = topology.fabrics[fabric]
    per_nic = links_per_nic(topology, fabric) if fabric != "oob" else 1
    g = FabricGraph(fabric, tuple(t.role for t in fab.tiers),
                    topology.resolved.fabrics[fabric].links_per_server if fabric != "oob" else 1, per_nic,
                    counts={t.role: fab.count(t.role) for t in fab.tiers})
    for a_role, a_idx, _ap, z_role, z_idx, _zp, speed in link_tuples(topology, fabric):
        if a_role == "server":
            g.server_leaves.setdefault(a_idx, []).append(z_idx)
            g.leaf_servers[z_idx].append(a_idx)
            bundle = ENDPOINT_TIER
        elif a_role in g.tiers and z_role == g.upper_of(a_role):
            bundle = TIER_OF[a_role]
            ups = g.up[(a_role, a_idx)]
            ups[z_idx] = ups.get(z_idx, 0) + 1
            downs = g.down[(z_role, z_idx)]
            downs[a_idx] = downs.get(a_idx, 0) + 1
        else:
            g.endpoint_leaves[(a_role, a_idx)].append(z_idx)
            g.leaf_endpoints[z_idx].append((a_role, a_idx))
            bundle = ENDPOINT_TIER
        g.links[bundle] += 1
        g.speed[bundle] = speed
    if fabric == "oob":
        g.links_per_server = max((len(v) for v in g.server_leaves.values()), default=0)
    if len(g.tiers) == 3:
        _index_pods(g)
    return g


def _index_pods(g: FabricGraph) -> None:
    """Pods of a three-tier fabric: the spines that share a set of leaves, and their core uplinks."""
    keyed: dict[frozenset[int], list[int]] = {}
    for j in range(g.counts.get("spine", 0)):
        keyed.setdefault(frozenset(g.down.get(("spine", j), {})), []).append(j)
    for leaves, spines in sorted(keyed.items(), key=lambda kv: kv[1][0]):
        for j in spines:
            g.pod_of[j] = len(g.pods)
        g.pods.append((leaves, tuple(spines), sum(g.uplinks(("spine", j)) for j in spines)))
