"""Fabric sizing: switches per tier and links per tier, from real port counts.

When a design leaves counts out, clusterplan sizes a non-blocking (1:1) fat-tree the way the DGX
SuperPOD reference architecture does: leaves with half their ports down and half up, a leaf per rail
per scalable unit (SU), spines sized to the leaves' uplinks (optionally for a planned build-out), and
a core tier in pods when one spine layer cannot reach every leaf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from validator.read.model import Tier
from validator.resolve.catalog.entries import Switch
from validator.resolve.resolved import ResolvedFabric


@dataclass(frozen=True)
class TierSize:
    role: str
    switch: Switch
    count: int
    down_ports: int          # ports per switch facing the tier below
    up_ports: int            # ports per switch facing the tier above (0 at the top)
    down_speed_gbps: float
    up_speed_gbps: float
    down_used: int = 0       # links from below, in total over the tier
    up_used: int = 0         # links to the tier above, in total over the tier

    @property
    def ports_used_per_switch(self) -> int:
        """Ports used on the busiest switch of the tier."""
        return math.ceil(self.down_used / self.count) + math.ceil(self.up_used / self.count)


@dataclass
class Sizing:
    tiers: list[TierSize]
    rails: int                  # 1 for a plain fat-tree
    group_servers: int          # servers per SU (rail-optimized) or per leaf (fat-tree)
    groups: int                 # SUs, or leaves of a fat-tree
    planned_groups: int
    leaves_per_pod: int         # 0 without a core tier
    pods: int
    endpoint_links: int
    extra_links: int
    problems: list[str] = field(default_factory=list)


def leaf_ports(switch: Switch, tier: Tier, down_speed: float, has_upper: bool) -> tuple[int, int, float]:
    """(downlinks, uplinks, uplink speed) per switch of a tier, from its port groups.

    Cages that offer the downlink speed are split half down, half up; a switch with separate
    uplink cages (48 x 1G RJ45 + 4 x 100G) uses those for its uplinks.
    """
    down_groups = [g for g in switch.port_groups if int(down_speed) in g.ports_per_cage]
    other_groups = [g for g in switch.port_groups if int(down_speed) not in g.ports_per_cage]
    per_cage = max((g.ports_per_cage[int(down_speed)] for g in down_groups), default=0)
    cages = sum(g.cages for g in down_groups)
    if not has_upper:
        return (tier.downlinks or cages * per_cage), 0, down_speed
    if other_groups and tier.uplink_speed_gbps is None:
        up_speed = float(max(other_groups[0].ports_per_cage))
        up = sum(g.cages * g.ports_per_cage.get(int(up_speed), 0) for g in other_groups)
        return (tier.downlinks or cages * per_cage), (up if tier.uplinks is None else tier.uplinks), up_speed
    up_speed = tier.uplink_speed_gbps or down_speed
    down = tier.downlinks or (cages // 2) * per_cage
    if tier.uplinks is not None:
        return down, tier.uplinks, up_speed
    free_cages = cages - math.ceil(down / per_cage) if per_cage else 0
    return down, max(0, free_cages) * _ports_per_cage(switch, up_speed), up_speed


def size_fabric(fab: ResolvedFabric, servers: int, extra_ports_per_fabric: int) -> Sizing:
    spec = fab.spec
    speed = spec.speed_gbps
    tiers = {t.role: t for t in fab.tiers}
    leaf = tiers["leaf"]
    leaf_spec = spec.tiers.leaf
    spine = tiers.get("spine")
    core = tiers.get("core")
    problems: list[str] = []
    if leaf.switch.ports_at(speed) == 0:
        return _unbuildable(leaf.switch, speed, f"leaf switch {leaf.switch.id} has no {speed:g}G ports")
    rails = fab.links_per_server if spec.topology == "rail-optimized" and fab.links_per_server else 1
    endpoint_links = servers * fab.links_per_server
    extra = extra_ports_per_fabric + sum(e.count * e.ports for e in spec.extra_endpoints)

    down, up, up_speed = leaf_ports(leaf.switch, leaf_spec, speed, spine is not None)
    down = max(down, 1)
    if rails > 1:
        group_servers = spec.scalable_unit_servers or down
        per_group = group_servers * rails
        groups = math.ceil((endpoint_links + extra) / per_group) if endpoint_links + extra else 1
        leaves = leaf_spec.count or groups * rails
    else:
        group_servers = max(1, down // max(1, fab.links_per_server)) if fab.links_per_server else down
        leaves = leaf_spec.count or max(1, math.ceil((endpoint_links + extra) / down))
        groups = leaves
    planned = max(groups, spec.planned_scalable_units or groups)
    planned_leaves = planned * rails if rails > 1 else planned
    leaf_size = TierSize("leaf", leaf.switch, leaves, down, up, speed, up_speed,
                         down_used=endpoint_links + extra, up_used=leaves * up if spine else 0)
    sized = [leaf_size]
    leaves_per_pod = 0
    pods = 1
    if spine is not None:
        spine_ports = spine.switch.ports_at(up_speed)
        if spine_ports < 2 or up < 1:
            return _unbuildable(leaf.switch, speed, f"spine switch {spine.switch.id} has no {up_speed:g}G ports"
                                if spine_ports < 2 else f"leaf switch {leaf.switch.id} has no uplink ports left")
        two_tier_spines = math.ceil(planned_leaves * up / spine_ports)
        spine_spec = spec.tiers.spine
        assert spine_spec is not None
        need_core = core is not None or (spine_spec.count is None and two_tier_spines > max(up, 1))
        if not need_core:
            count = spine_spec.count or max(1, two_tier_spines)
            sized.append(TierSize("spine", spine.switch, count, spine_ports, 0, up_speed, up_speed,
                                  down_used=leaves * up))
        else:
            core_switch = core.switch if core else spine.switch
            spine_down = spine_ports // 2
            spine_up = spine_ports - spine_down
            leaves_per_pod = max(rails, (spine_down // rails) * rails)
            spines_per_pod = max(1, math.ceil(leaves_per_pod * up / spine_down))
            pods = math.ceil(planned_leaves / leaves_per_pod)
            built_pods = math.ceil(leaves / leaves_per_pod)
            spine_count = spine_spec.count or built_pods * spines_per_pod
            core_ports = core_switch.ports_at(up_speed) or 1
            core_count = (spec.tiers.core.count if spec.tiers.core else None) or \
                max(1, math.ceil(pods * spines_per_pod * spine_up / core_ports))
            if pods > core_ports:
                problems.append(f"{pods} pods exceed the {core_ports} ports of a core switch; "
                                "a fourth tier or a larger radix is needed")
            pods = built_pods
            sized.append(TierSize("spine", spine.switch, spine_count, spine_down, spine_up, up_speed, up_speed,
                                  down_used=leaves * up, up_used=spine_count * spine_up))
            sized.append(TierSize("core", core_switch, core_count, core_ports, 0, up_speed, up_speed,
                                  down_used=spine_count * spine_up))
    return Sizing(sized, rails, group_servers, groups, planned, leaves_per_pod, pods, endpoint_links, extra,
                  problems)


def _unbuildable(switch: Switch, speed: float, problem: str) -> Sizing:
    """A placeholder sizing that carries the problem; the pipeline reports it and stops."""
    return Sizing([TierSize("leaf", switch, 1, 0, 0, speed, speed)], 1, 1, 1, 1, 0, 1, 0, 0, [problem])


def _ports_per_cage(switch: Switch, speed: float) -> int:
    return max((g.ports_per_cage.get(int(speed), 0) for g in switch.port_groups), default=0)
