"""The tiers above the leaves: a spine tier every leaf reaches (two tiers), or pods of leaves with their
own spines joined by core groups (three tiers). See validator/expand/sizing.py for the construction."""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.expand.plane import (
    Problem,
    TierSize,
    Unbuildable,
    layout_or_fail,
    smallest_divisor,
    taper_of,
    tier_path,
)
from validator.expand.ports import PortLayout, most_downlinks, ports_at, uplinks_for
from validator.read.model import Tier
from validator.resolve.catalog.entries import Switch
from validator.resolve.resolved import ResolvedFabric


def too_few_spines(leaf: TierSize, planned: int, switch: Switch, count: int) -> str:
    cap = ports_at(switch, leaf.up_speed_gbps)
    return (f"spine count {count} is declared: {planned} leaves x {leaf.up_ports} uplinks = "
            f"{planned * leaf.up_ports:,} links > {count} x {cap} ports of {switch.id}")


def two_tier(fab: ResolvedFabric, leaf: TierSize, planned_leaves: int, switch: Switch, spec: Tier,
             problems: list[Problem], min_spines: int = 0) -> TierSize | None:
    """The spine tier when every leaf reaches every spine (at least `min_spines` of them when the uplinks allow);
    None when no spine count fits."""
    up, speed = leaf.up_ports, leaf.up_speed_gbps
    cap = ports_at(switch, speed)
    path = tier_path(fab, "spine")
    if cap == 0:
        raise Unbuildable(Problem("TOP001", path, f"spine switch {switch.id} has no {speed:g}G ports", True))
    links = planned_leaves * up
    if spec.count is not None:
        count = spec.count
        per_spine = planned_leaves * math.ceil(up / count)
        if per_spine > cap:
            return None
        if up % count:
            problems.append(Problem("NET006", path, f"spine: {up} uplinks per leaf do not divide over {count} "
                                    f"spines: some leaf-spine pairs carry {up // count + 1} links, others "
                                    f"{up // count}", False))
    else:
        found = smallest_divisor(up, max(links / cap, min(min_spines, up)))
        if found is None:
            return None
        count = found
    taper, declared = taper_of(fab, spec)
    down = min(cap, planned_leaves * math.ceil(up / count))
    found_layout = layout_or_fail(switch, down, 0, speed, speed, path, "spine")
    return TierSize("spine", switch, count, down, 0, speed, speed, found_layout, path, taper, declared)


def leaves_per_pod(fab: ResolvedFabric, leaf: TierSize, spine: Switch, speed: float, su: int,
                    leaves_per_rail: int, rails: int, servers_per_leaf: int, gpus_per_server: int) -> int:
    pod = fab.spec.pod
    path = ("fabrics", fab.name, "pod")
    if pod is not None:
        pod_servers = pod.servers or math.ceil((pod.gpus or 0) / max(1, gpus_per_server))
        if fab.spec.topology == "rail-optimized":
            if pod_servers % su:
                raise Unbuildable(Problem("NET007", path, f"a pod of {pod_servers} servers is not a whole number "
                                           f"of {su}-server SUs", True))
            return pod_servers // su * rails * leaves_per_rail
        return math.ceil(pod_servers / servers_per_leaf) * rails
    spine_taper, _ = taper_of(fab, fab.spec.tiers.spine) if fab.spec.tiers.spine else (1.0, False)
    down = most_downlinks(spine, speed, speed, spine_taper, True)
    if fab.spec.topology == "rail-optimized":
        if leaves_per_rail > 1:     # a spine-leaf group per rail per SU, as the GB200 SuperPOD builds it
            return leaves_per_rail
        per_su = rails * leaves_per_rail    # else as many whole SUs as a spine can reach each leaf of once
        return max(1, down // per_su) * per_su
    return max(rails, down // rails * rails)


@fact
class PodSpines:
    per_pod: int              # spines of one pod
    down: int                 # downlinks per spine
    up: int                   # uplinks per spine (to its core group)
    layout: PortLayout


def three_tier(fab: ResolvedFabric, leaf: TierSize, leaves: int, planned_leaves: int, per_pod: int,
               spine_sw: Switch, core_sw: Switch, problems: list[Problem]) -> tuple[TierSize, TierSize, int, int]:
    """Spines per pod and cores per group: spine j of every pod joins core group j."""
    spec = fab.spec
    spine_spec, core_spec = spec.tiers.spine, spec.tiers.core
    assert spine_spec is not None
    speed = leaf.up_speed_gbps
    up_speed = spine_spec.up_speed(speed)    # spine-core links (e.g. 800G on 400G spines)
    taper, declared = taper_of(fab, spine_spec)
    pods = math.ceil(leaves / per_pod)
    planned_pods = math.ceil(planned_leaves / per_pod)
    spines = _pod_spines(fab, leaf, pods, per_pod, spine_sw, spine_spec, taper, problems)
    per_group = _cores_per_group(fab, spines, planned_pods, core_sw, core_spec, up_speed, problems)
    core_taper, core_declared = taper_of(fab, core_spec) if core_spec else (1.0, False)
    core_down = planned_pods * math.ceil(spines.up / per_group)
    core_path = tier_path(fab, "core")
    core_layout = layout_or_fail(core_sw, core_down, 0, up_speed, up_speed, core_path, "core")
    spine_t = TierSize("spine", spine_sw, pods * spines.per_pod, spines.down, spines.up, speed, up_speed,
                       spines.layout, tier_path(fab, "spine"), taper, declared)
    core_t = TierSize("core", core_sw, spines.per_pod * per_group, core_down, 0, up_speed, up_speed, core_layout,
                      core_path, core_taper, core_declared)
    return spine_t, core_t, spines.per_pod, per_group


def _pod_spines(fab: ResolvedFabric, leaf: TierSize, pods: int, per_pod: int, spine_sw: Switch, spine_spec: Tier,
                taper: float, problems: list[Problem]) -> PodSpines:
    """The smallest divisor of a leaf's uplinks whose spines hold a pod's leaves (or the declared count)."""
    speed, up = leaf.up_speed_gbps, leaf.up_ports
    up_speed = spine_spec.up_speed(speed)
    spine_path = tier_path(fab, "spine")
    spine_down_cap = most_downlinks(spine_sw, speed, up_speed, taper, True)
    if spine_spec.count is not None:
        if spine_spec.count % pods:
            raise Unbuildable(Problem("NET007", spine_path, f"spine count {spine_spec.count} is declared, which "
                                      f"does not divide into {pods} pods of {per_pod} leaves", True))
        per_pod_spines = spine_spec.count // pods
    else:
        found = smallest_divisor(up, per_pod * up / max(1, spine_down_cap))
        if found is None:
            raise Unbuildable(Problem("NET001", ("fabrics", fab.name, "pod"), f"a pod of {per_pod} leaves x {up} "
                                      f"uplinks does not fit on {up} spines of {spine_down_cap} downlinks", True))
        per_pod_spines = found
    spine_down = per_pod * math.ceil(up / per_pod_spines)
    if spine_down > spine_down_cap:
        raise Unbuildable(Problem("NET001", spine_path, f"spine: {per_pod} leaves x {math.ceil(up / per_pod_spines)} "
                                  f"links = {spine_down} downlinks > the {spine_down_cap} a {spine_sw.id} has at "
                                  f"{speed:g}G with its uplinks", True))
    if up % per_pod_spines:
        problems.append(Problem("NET006", spine_path, f"spine: {up} uplinks per leaf do not divide over "
                                f"{per_pod_spines} spines per pod", False))
    spine_up = uplinks_for(spine_down, speed, up_speed, taper)
    found_layout = layout_or_fail(spine_sw, spine_down, spine_up, speed, up_speed, spine_path, "spine")
    return PodSpines(per_pod_spines, spine_down, spine_up, found_layout)


def _cores_per_group(fab: ResolvedFabric, spines: PodSpines, planned_pods: int, core_sw: Switch,
                     core_spec: Tier | None, speed: float, problems: list[Problem]) -> int:
    """The smallest divisor of a spine's uplinks whose cores join every pod (or the declared count)."""
    core_path = tier_path(fab, "core")
    core_cap = ports_at(core_sw, speed)
    spine_up = spines.up
    if core_spec is not None and core_spec.count is not None:
        if core_spec.count % spines.per_pod:
            raise Unbuildable(Problem("NET007", core_path, f"core count {core_spec.count} is declared, which does "
                                      f"not divide into {spines.per_pod} core groups (one per spine of a pod)",
                                      True))
        per_group = core_spec.count // spines.per_pod
        if planned_pods * math.ceil(spine_up / per_group) > core_cap:
            raise Unbuildable(Problem("NET001", core_path, f"core: {planned_pods} pods x "
                                      f"{math.ceil(spine_up / per_group)} links > {core_cap} ports", True))
        if spine_up % per_group:
            problems.append(Problem("NET006", core_path, f"core: {spine_up} spine uplinks do not divide over "
                                    f"{per_group} cores per group", False))
        return per_group
    found = smallest_divisor(spine_up, planned_pods * spine_up / max(1, core_cap))
    if found is None:
        raise Unbuildable(Problem("NET001", core_path, f"{planned_pods} pods exceed what one core layer of "
                                  f"{core_sw.id} ({core_cap} ports) can join; a fourth tier or a larger radix "
                                  "is needed", True))
    return found
