"""What a set of failed parts takes away from one fabric: links and bandwidth per tier, servers cut off or
slowed, GPUs whose own NIC lost every link, appliances and management ports cut off (the derive stage).

A link is lost when either end is down (a failed switch, server or appliance) or the link itself failed.
A live server is *cut off* when none of its links reaches a live leaf that still reaches the rest of the
fabric: a leaf with no live uplink (when the fabric has a tier above it) only joins its own servers, and a
pod whose spines all lost their core uplinks only joins its own leaves. A server that keeps some links is
*degraded* to the share it keeps. Only the parts next to a failure are visited, so a whole-rack failure
costs its own links, not a pass over a 100k-GPU fabric.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from validator.base.facts import fact
from validator.derive.failures.graph import ENDPOINT_TIER, TIER_OF, Endpoint, FabricGraph, Switch


@fact
class Failure:
    """The parts that fail together: servers, switches (fabric, role, index), appliances (fabric-independent
    role and index, e.g. storage nodes), one server link (fabric, server, link) or one switch link (fabric,
    lower role, lower index, upper index)."""

    servers: frozenset[int] = frozenset()
    switches: frozenset[tuple[str, str, int]] = frozenset()
    endpoints: frozenset[Endpoint] = frozenset()
    server_link: tuple[str, int, int] | None = None
    switch_link: tuple[str, str, int, int] | None = None


@dataclass
class FabricImpact:
    fabric: str
    links_lost: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cut_off: set[int] = field(default_factory=set)          # live servers that reach no live leaf
    degraded: dict[int, float] = field(default_factory=dict)  # live server -> share of its links left
    nics_dead: int = 0                                        # NICs of live servers with every link lost
    nic_lost: set[int] = field(default_factory=set)           # live servers with such a NIC
    endpoints_cut_off: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    uplink_share: float = 1.0                                 # least share of uplinks a live switch keeps

    @property
    def any_loss(self) -> bool:
        return bool(sum(self.links_lost.values()) or self.cut_off or self.degraded)

    @property
    def path_share(self) -> float:
        """The least share of its bandwidth any live, reachable server keeps (1.0: none lost)."""
        return min([self.uplink_share, *self.degraded.values()])


def fabric_impact(g: FabricGraph, failure: Failure) -> FabricImpact:
    out = FabricImpact(g.name)
    dead: set[Switch] = {(role, i) for fab, role, i in failure.switches if fab == g.name}
    lost_up = _switch_links(g, failure, dead, out)
    isolated = _isolated_leaves(g, dead, lost_up, out)
    dead_leaves = {i for role, i in dead if role == "leaf"}
    _server_links(g, failure, dead_leaves, dead_leaves | isolated, out)
    _endpoint_links(g, failure, dead_leaves | isolated, dead_leaves, out)
    return out


def _switch_links(g: FabricGraph, failure: Failure, dead: set[Switch], out: FabricImpact) -> dict[Switch, int]:
    """Links between switch tiers lost; returns the uplinks each live switch lost."""
    lost_up: dict[Switch, int] = defaultdict(int)
    for role, i in sorted(dead):
        if g.upper_of(role) is not None:
            out.links_lost[TIER_OF[role]] += g.uplinks((role, i))
        lower = g.lower_of(role)
        if lower is None:
            continue
        for j, n in g.down.get((role, i), {}).items():
            if (lower, j) not in dead:
                out.links_lost[TIER_OF[lower]] += n
                lost_up[(lower, j)] += n
    if failure.switch_link is not None and failure.switch_link[0] == g.name:
        _, role, i, j = failure.switch_link
        upper = g.upper_of(role) if role in g.tiers else None
        if upper is not None and (role, i) not in dead and (upper, j) not in dead and g.up.get((role, i), {}).get(j):
            out.links_lost[TIER_OF[role]] += 1
            lost_up[(role, i)] += 1
    for sw, n in lost_up.items():
        total = g.uplinks(sw)
        if sw[0] == "leaf" and total and n < total:
            out.uplink_share = min(out.uplink_share, (total - n) / total)
    return lost_up


def _isolated_leaves(g: FabricGraph, dead: set[Switch], lost_up: dict[Switch, int], out: FabricImpact) -> set[int]:
    """Live leaves that no longer reach the rest of the fabric (there is a tier above them)."""
    if len(g.tiers) < 2 or g.leaves < 2:
        return set()
    isolated = {i for (role, i), n in lost_up.items() if role == "leaf" and n >= g.uplinks((role, i))}
    if len(g.tiers) == 3:
        isolated |= _pods(g, dead, lost_up, out)
    return isolated


def _pods(g: FabricGraph, dead: set[Switch], lost_up: dict[Switch, int], out: FabricImpact) -> set[int]:
    """A pod's share of its core uplinks left (its spines' uplinks, a dead spine's counted lost); the live
    leaves of a pod left with none, when there is more than one pod."""
    if len(g.pods) < 2:
        return set()
    hit = {j for (role, j) in lost_up if role == "spine"} | {j for role, j in dead if role == "spine"}
    isolated: set[int] = set()
    for pod in sorted({g.pod_of[j] for j in hit if j in g.pod_of}):
        leaves, spines, total = g.pods[pod]
        lost = sum(g.uplinks(("spine", s)) if ("spine", s) in dead else lost_up.get(("spine", s), 0) for s in spines)
        if total and lost >= total:
            isolated |= {leaf for leaf in leaves if ("leaf", leaf) not in dead}
        elif total:
            out.uplink_share = min(out.uplink_share, (total - lost) / total)
    return isolated


def _server_links(g: FabricGraph, failure: Failure, dead_leaves: set[int], bad_leaves: set[int],
                  out: FabricImpact) -> None:
    affected = {s for leaf in bad_leaves for s in g.leaf_servers.get(leaf, ())}
    affected |= {s for s in failure.servers if s in g.server_leaves}
    one = failure.server_link if failure.server_link and failure.server_link[0] == g.name else None
    if one is not None and one[1] in g.server_leaves:
        affected.add(one[1])
    per_nic = max(1, g.per_nic)
    for s in sorted(affected):
        leaves = g.server_leaves[s]
        if s in failure.servers:
            out.links_lost[ENDPOINT_TIER] += len(leaves)
            continue
        usable = [leaf not in bad_leaves and not (one is not None and one[1] == s and one[2] == k)
                  for k, leaf in enumerate(leaves)]
        lost = sum(1 for k, leaf in enumerate(leaves) if leaf in dead_leaves or
                   (one is not None and one[1] == s and one[2] == k))
        if lost:
            out.links_lost[ENDPOINT_TIER] += lost
        kept = sum(usable)
        if kept == 0:
            out.cut_off.add(s)
            continue
        if kept < len(leaves):
            out.degraded[s] = kept / len(leaves)
            dead_nics = sum(1 for n in range(0, len(usable), per_nic) if not any(usable[n:n + per_nic]))
            if dead_nics:
                out.nics_dead += dead_nics
                out.nic_lost.add(s)


def _endpoint_links(g: FabricGraph, failure: Failure, bad_leaves: set[int], dead_leaves: set[int],
                    out: FabricImpact) -> None:
    """Appliances, storage nodes and management ports: lost links and those cut off."""
    seen: set[Endpoint] = set()
    for leaf in sorted(bad_leaves):
        seen.update(g.leaf_endpoints.get(leaf, ()))
    seen |= {e for e in failure.endpoints if e in g.endpoint_leaves}
    for e in sorted(seen):
        leaves = g.endpoint_leaves[e]
        if e in failure.endpoints:
            out.links_lost[ENDPOINT_TIER] += len(leaves)
            continue
        lost = sum(1 for leaf in leaves if leaf in dead_leaves)
        if lost:
            out.links_lost[ENDPOINT_TIER] += lost
        if all(leaf in bad_leaves for leaf in leaves):
            out.endpoints_cut_off[e[0]] += 1
