"""Fabric sizing: switches per tier, from real port counts, one plane at a time.

A plane (the whole fabric unless the design declares several) is built bottom-up, as the NVIDIA
DGX SuperPOD reference architectures build theirs:

- **Leaves.** Servers are grouped in scalable units (SU). In an SU every rail (a NIC index of a
  rail-optimized fabric; the whole server of a fat-tree; one side of a dual-ToR pair) gets a rail
  group of leaves, enough for the SU's ports of that rail. Leaves are built for whole SUs. A leaf has
  D downlinks and U uplinks with D x speed / (U x uplink speed) = the tier's taper (1:1 by default).
  Appliances (UFM, storage nodes) take free leaf ports, then leaves of their own.
- **Two tiers.** Every leaf reaches every spine. The spine count S is the smallest divisor of U
  whose S spines hold the L x U leaf uplinks (planned SUs included): each leaf-spine pair then
  carries the same U / S links ("even striping").
- **Three tiers.** When no divisor works, leaves form pods (a rail group of one SU, one SU, or the
  design's zone), each with S_p spines (the smallest divisor of U they fit on); spine j of every pod
  joins core group j, whose C cores are the smallest divisor of the spine uplinks that holds every
  pod's link: every spine-core pair again carries the same number of links.

Nothing here silently differs from the design: a declared count, port number or taper that cannot
be honoured, or a tier that cannot be striped evenly, becomes a `Problem` naming the tier and the
arithmetic. Fatal problems mean the fabric cannot be built as declared and no link is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from validator.base.errors import Path
from validator.expand.ports import (
    PortLayout,
    dedicated_uplinks,
    layout,
    most_downlinks,
    ports_at,
    uplinks_for,
)
from validator.read.model import Tier
from validator.resolve.catalog.entries import Switch
from validator.resolve.resolved import ResolvedFabric


@dataclass(frozen=True)
class Problem:
    rule: str        # NET001 ports, NET006 striping, NET007 declared value, TOP001 unbuildable
    path: Path
    message: str
    fatal: bool      # the fabric cannot be built as declared: no link of it is made


@dataclass(frozen=True)
class TierSize:
    role: str
    switch: Switch
    count: int                # switches in this tier, per plane
    down_ports: int           # ports per switch reserved for the tier below
    up_ports: int             # ports per switch to the tier above (0 at the top)
    down_speed_gbps: float
    up_speed_gbps: float
    layout: PortLayout
    path: Path
    taper: float              # the taper the design asks of this tier (down : up bandwidth)
    taper_declared: bool

    @property
    def ratio(self) -> float:
        """Downlink bandwidth over uplink bandwidth of one switch, from its ports (0 at the top)."""
        if not self.up_ports:
            return 0.0
        return self.down_ports * self.down_speed_gbps / (self.up_ports * self.up_speed_gbps)


@dataclass(frozen=True)
class PlaneSize:
    rails: int                # leaf rails of a plane: server ports on it (rail-optimized), 2 (dual-ToR) or 1
    ports_per_rail: int       # links one server brings to one rail
    su_servers: int
    sus: int                  # SUs that hold servers (their leaves are built)
    planned_sus: int
    leaves_per_rail: int      # leaves of one rail in one SU (a rail group)
    servers_per_leaf: int
    server_leaves: int        # sus x rails x leaves_per_rail
    leaves_per_pod: int       # leaves that share a set of spines (every leaf in two tiers)
    spines_per_pod: int       # spines of one pod (two tiers: every spine)
    cores_per_group: int      # three tiers: cores joined by spine j of every pod (0 otherwise)
    tiers: tuple[TierSize, ...]
    endpoint_links: int       # server links on one plane
    extra_links: int          # appliance links on one plane

    def tier(self, role: str) -> TierSize | None:
        return next((t for t in self.tiers if t.role == role), None)

    @property
    def leaves(self) -> int:
        return self.tiers[0].count

    @property
    def pods(self) -> int:
        return math.ceil(self.leaves / self.leaves_per_pod) if self.leaves_per_pod else 1

    def pod_of_leaf(self, leaf: int) -> int:
        return leaf // self.leaves_per_pod if len(self.tiers) == 3 else 0


@dataclass
class FabricSize:
    planes: int
    plane: PlaneSize
    problems: list[Problem] = field(default_factory=list)

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)


class _Unbuildable(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def parse_ratio(text: str | None) -> float | None:
    """'7:1' -> 7.0 (down : up bandwidth)."""
    if not text:
        return None
    a, b = (float(x) for x in text.split(":"))
    return a / b if b else None


def smallest_divisor(n: int, at_least: float) -> int | None:
    """The smallest divisor of n that is >= at_least (None when at_least > n)."""
    for d in range(max(1, math.ceil(at_least - 1e-9)), n + 1):
        if n % d == 0:
            return d
    return None


def planes_and_rails(fab: ResolvedFabric) -> tuple[int, int, int]:
    """(planes, rails per plane, links per server per rail) of a fabric's server links."""
    spec = fab.spec
    links = fab.links_per_server
    planes = links if spec.topology == "rail-only" and links else spec.planes
    on_plane = max(1, links // planes) if links else 0
    if spec.topology == "rail-optimized":
        return planes, max(1, on_plane), 1
    sides = 2 if spec.attachment == "dual" and on_plane >= 2 else 1
    return planes, sides, max(1, on_plane // sides)


def placement(fab: ResolvedFabric, role: str, servers_per_rack: int = 0, tiers: int = 0) -> str:
    """Where a tier's switches stand: the design's `placement`, else the default of its fabric style.

    Defaults: out-of-band leaves in every rack; leaves of a rail-optimized or rail-only fabric in the
    network racks of their scalable unit (as the DGX SuperPOD rack elevations); a fat-tree leaf in
    the rack (top of rack) when one rack's servers fill at least half of its downlinks, else in the
    row's network racks; a single-tier fat-tree (no spine) centrally; cores and two-tier spines
    centrally, three-tier spines with their pod.
    """
    tier = getattr(fab.spec.tiers, role)
    if tier is not None and tier.placement:
        return str(tier.placement)
    if fab.name == "oob" and role == "leaf":
        return "rack" if oob_rack_ports(fab, servers_per_rack) else "row"
    if role == "leaf":
        if fab.spec.topology != "fat-tree":
            return "row"
        if fab.spec.tiers.spine is None:
            return "central"
        leaf = next(t.switch for t in fab.tiers if t.role == "leaf")
        speed = fab.spec.speed_gbps
        most = most_downlinks(leaf, speed, tier.uplink_speed_gbps or speed, _taper(fab, tier)[0], True)
        rack_ports = servers_per_rack * max(1, fab.links_per_server // max(1, fab.spec.planes))
        return "rack" if fab.links_per_server and 2 * rack_ports >= most else "row"
    if role == "spine" and (fab.spec.tiers.core is not None or tiers == 3):
        return "row"
    return "central"


def oob_rack_ports(fab: ResolvedFabric, servers_per_rack: int) -> bool:
    """Whether one rack's management ports fill at least a quarter of an out-of-band leaf (an NVL72 rack's
    trays, switch trays and power shelves do; four DGX do not, and share a leaf per row instead, their
    copper still well inside 100 m)."""
    leaf = next(t.switch for t in fab.tiers if t.role == "leaf")
    return 4 * servers_per_rack * max(1, fab.links_per_server) >= ports_at(leaf, fab.spec.speed_gbps)


def size_fabric(fab: ResolvedFabric, servers: int, servers_per_rack: int, gpus_per_server: int,
                extra_links: int, leaf_count: int | None = None) -> FabricSize:
    """Size one fabric; `extra_links` are appliance ports on each plane (storage nodes, UFM, mgmt).

    `leaf_count` pins the leaves when the floor plan decides them (out-of-band leaves, one per rack).
    """
    problems: list[Problem] = []
    try:
        plane = _size_plane(fab, servers, servers_per_rack, gpus_per_server, extra_links, problems, leaf_count)
    except _Unbuildable as exc:
        problems.append(exc.problem)
        plane = _placeholder(fab)
    planes, _, _ = planes_and_rails(fab)
    return FabricSize(planes, plane, problems)


def _tier_path(fab: ResolvedFabric, role: str) -> Path:
    return ("fabrics", fab.name, "tiers", role)


def _taper(fab: ResolvedFabric, tier: Tier) -> tuple[float, bool]:
    own = parse_ratio(tier.oversubscription)
    if own is not None:
        return own, True
    shared = parse_ratio(fab.spec.oversubscription)
    return (shared, True) if shared is not None else (1.0, False)


def _size_plane(fab: ResolvedFabric, servers: int, servers_per_rack: int, gpus_per_server: int, extra: int,
                problems: list[Problem], leaf_count: int | None) -> PlaneSize:
    spec = fab.spec
    speed = spec.speed_gbps
    roles = {t.role: t for t in fab.tiers}
    leaf_sw = roles["leaf"].switch
    spine = roles.get("spine")
    core = roles.get("core")
    leaf_path = _tier_path(fab, "leaf")
    if ports_at(leaf_sw, speed) == 0:
        raise _Unbuildable(Problem("TOP001", leaf_path, f"leaf switch {leaf_sw.id} has no {speed:g}G ports", True))
    planes, rails, ppr = planes_and_rails(fab)
    links = fab.links_per_server
    if links and links % planes:
        raise _Unbuildable(Problem("NET007", ("fabrics", fab.name, "planes"),
                                   f"{links} server links do not split over {planes} planes", True))
    endpoint = servers * (links // planes if links else 0)
    mapping = spec.nic_to_rail
    if spec.topology == "rail-optimized" and mapping is not None and sorted(mapping) != list(range(len(mapping))):
        raise _Unbuildable(Problem("NET007", ("fabrics", fab.name, "nic_to_rail"), f"nic_to_rail {mapping} sends two "
                                   "NICs to one rail (or skips one): it must name each rail once", True))

    # ---- leaves
    leaf_spec = spec.tiers.leaf
    taper, declared = _taper(fab, leaf_spec)
    up_speed = leaf_spec.uplink_speed_gbps or speed
    has_upper = spine is not None
    dedicated = dedicated_uplinks(leaf_sw, speed) if has_upper and leaf_spec.uplink_speed_gbps is None else None
    if dedicated:
        up_speed = dedicated[1]
    most = most_downlinks(leaf_sw, speed, up_speed, taper, has_upper)
    tor = placement(fab, "leaf", servers_per_rack) == "rack" and fab.name != "oob" and spec.topology == "fat-tree"
    rack_ports = servers_per_rack * (links // planes if links else 0)
    down = leaf_spec.downlinks or (min(most, rack_ports) if tor and rack_ports else most)
    if not has_upper:
        up = 0
    elif leaf_spec.uplinks is not None:
        up = leaf_spec.uplinks
    elif dedicated:
        up = min(dedicated[0], uplinks_for(down, speed, up_speed, taper))
    else:
        up = uplinks_for(down, speed, up_speed, taper)
    if has_upper and up == 0:
        raise _Unbuildable(Problem("TOP001", leaf_path, f"leaf {leaf_sw.id} has no port left for uplinks", True))
    if leaf_spec.uplinks is not None and leaf_spec.downlinks is not None and leaf_spec.oversubscription:
        want = uplinks_for(down, speed, up_speed, taper)
        if want != up:
            problems.append(Problem("NET007", leaf_path, f"leaf: {down} x {speed:g}G down at "
                                    f"{leaf_spec.oversubscription} needs {want} x {up_speed:g}G up, but "
                                    f"uplinks: {up} is declared", False))
    leaf_layout = _layout_or_fail(leaf_sw, down, up, speed, up_speed, leaf_path, "leaf")
    servers_per_leaf = max(1, down // ppr)
    su = _su_servers(fab, servers_per_rack) or (servers_per_rack if tor and down >= rack_ports else servers_per_leaf)
    leaves_per_rail = math.ceil(su / servers_per_leaf)
    sus = math.ceil(servers / su) if servers and endpoint else 0
    planned_sus = max(sus, spec.planned_scalable_units or 0)
    server_leaves = sus * rails * leaves_per_rail
    free = server_leaves * down - endpoint
    extra_leaves = math.ceil((extra - free) / down) if extra > free else 0
    leaves = max(server_leaves + extra_leaves, leaf_count or 0)
    if leaf_spec.count is not None:
        if leaf_spec.count < leaves:
            raise _Unbuildable(Problem("NET001", leaf_path, _short_leaves(leaf_spec.count, leaves, endpoint, extra,
                                                                           down, speed), True))
        leaves = leaf_spec.count
    planned_leaves = max(leaves, planned_sus * rails * leaves_per_rail + extra_leaves)
    leaf = TierSize("leaf", leaf_sw, leaves, down, up, speed, up_speed, leaf_layout, leaf_path, taper, declared)
    tiers: list[TierSize] = [leaf]
    shape = dict(rails=rails, ports_per_rail=ppr, su_servers=su, sus=sus, planned_sus=planned_sus,
                 leaves_per_rail=leaves_per_rail, servers_per_leaf=servers_per_leaf, server_leaves=server_leaves,
                 endpoint_links=endpoint, extra_links=extra)
    if spine is None:
        return PlaneSize(**shape, leaves_per_pod=leaves, spines_per_pod=0, cores_per_group=0,
                         tiers=tuple(tiers))
    spine_spec = spec.tiers.spine
    assert spine_spec is not None
    two_tier = _two_tier(fab, leaf, planned_leaves, spine.switch, spine_spec, problems)
    if two_tier is not None and core is None:
        tiers.append(two_tier)
        return PlaneSize(**shape, leaves_per_pod=leaves, spines_per_pod=two_tier.count,
                         cores_per_group=0, tiers=tuple(tiers))
    if spine_spec.count is not None and core is None:
        raise _Unbuildable(Problem("NET001", _tier_path(fab, "spine"), _too_few_spines(
            leaf, planned_leaves, spine.switch, spine_spec.count), True))
    per_pod = _leaves_per_pod(fab, leaf, spine.switch, up_speed, su, leaves_per_rail, rails, servers_per_leaf,
                              gpus_per_server)
    spine_t, core_t, spines_per_pod, cores_per_group = _three_tier(
        fab, leaf, leaves, planned_leaves, per_pod, spine.switch, core.switch if core else spine.switch, problems)
    tiers += [spine_t, core_t]
    return PlaneSize(**shape, leaves_per_pod=per_pod, spines_per_pod=spines_per_pod,
                     cores_per_group=cores_per_group, tiers=tuple(tiers))


def _su_servers(fab: ResolvedFabric, servers_per_rack: int) -> int | None:
    spec = fab.spec
    if spec.scalable_unit is not None:
        if spec.scalable_unit.servers:
            return spec.scalable_unit.servers
        if spec.scalable_unit.racks:
            return spec.scalable_unit.racks * servers_per_rack
    return spec.scalable_unit_servers


def _layout_or_fail(switch: Switch, down: int, up: int, down_speed: float, up_speed: float, path: Path,
                    role: str) -> PortLayout:
    found = layout(switch, down, up, down_speed, up_speed)
    if found is None:
        raise _Unbuildable(Problem("NET001", path, f"{role} {switch.id}: {down} x {down_speed:g}G down + {up} x "
                                   f"{up_speed:g}G up do not fit its cages ({ports_at(switch, down_speed)} ports "
                                   f"at {down_speed:g}G in all)", True))
    return found


def _short_leaves(declared: int, needed: int, endpoint: int, extra: int, down: int, speed: float) -> str:
    return (f"leaf count {declared} is declared, but {endpoint:,} server links + {extra:,} appliance links at "
            f"{speed:g}G need {needed} leaves of {down} downlinks (whole SUs, one rail group per rail)")


def _too_few_spines(leaf: TierSize, planned: int, switch: Switch, count: int) -> str:
    cap = ports_at(switch, leaf.up_speed_gbps)
    return (f"spine count {count} is declared: {planned} leaves x {leaf.up_ports} uplinks = "
            f"{planned * leaf.up_ports:,} links > {count} x {cap} ports of {switch.id}")


def _two_tier(fab: ResolvedFabric, leaf: TierSize, planned_leaves: int, switch: Switch, spec: Tier,
              problems: list[Problem]) -> TierSize | None:
    """The spine tier when every leaf reaches every spine; None when no spine count fits."""
    up, speed = leaf.up_ports, leaf.up_speed_gbps
    cap = ports_at(switch, speed)
    path = _tier_path(fab, "spine")
    if cap == 0:
        raise _Unbuildable(Problem("TOP001", path, f"spine switch {switch.id} has no {speed:g}G ports", True))
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
        found = smallest_divisor(up, links / cap)
        if found is None:
            return None
        count = found
    taper, declared = _taper(fab, spec)
    down = min(cap, planned_leaves * math.ceil(up / count))
    found_layout = _layout_or_fail(switch, down, 0, speed, speed, path, "spine")
    return TierSize("spine", switch, count, down, 0, speed, speed, found_layout, path, taper, declared)


def _leaves_per_pod(fab: ResolvedFabric, leaf: TierSize, spine: Switch, speed: float, su: int,
                    leaves_per_rail: int, rails: int, servers_per_leaf: int, gpus_per_server: int) -> int:
    pod = fab.spec.pod
    path = ("fabrics", fab.name, "pod")
    if pod is not None:
        pod_servers = pod.servers or math.ceil((pod.gpus or 0) / max(1, gpus_per_server))
        if fab.spec.topology == "rail-optimized":
            if pod_servers % su:
                raise _Unbuildable(Problem("NET007", path, f"a pod of {pod_servers} servers is not a whole number "
                                           f"of {su}-server SUs", True))
            return pod_servers // su * rails * leaves_per_rail
        return math.ceil(pod_servers / servers_per_leaf) * rails
    spine_taper, _ = _taper(fab, fab.spec.tiers.spine) if fab.spec.tiers.spine else (1.0, False)
    down = most_downlinks(spine, speed, speed, spine_taper, True)
    if fab.spec.topology == "rail-optimized":
        if leaves_per_rail > 1:     # a spine-leaf group per rail per SU, as the GB200 SuperPOD builds it
            return leaves_per_rail
        per_su = rails * leaves_per_rail    # else as many whole SUs as a spine can reach each leaf of once
        return max(1, down // per_su) * per_su
    return max(rails, down // rails * rails)


def _three_tier(fab: ResolvedFabric, leaf: TierSize, leaves: int, planned_leaves: int, per_pod: int,
                spine_sw: Switch, core_sw: Switch, problems: list[Problem]) -> tuple[TierSize, TierSize, int, int]:
    spec = fab.spec
    spine_spec, core_spec = spec.tiers.spine, spec.tiers.core
    assert spine_spec is not None
    speed = leaf.up_speed_gbps
    up = leaf.up_ports
    spine_path, core_path = _tier_path(fab, "spine"), _tier_path(fab, "core")
    taper, declared = _taper(fab, spine_spec)
    spine_down_cap = most_downlinks(spine_sw, speed, speed, taper, True)
    pods = math.ceil(leaves / per_pod)
    planned_pods = math.ceil(planned_leaves / per_pod)
    if spine_spec.count is not None:
        if spine_spec.count % pods:
            raise _Unbuildable(Problem("NET007", spine_path, f"spine count {spine_spec.count} is declared, which "
                                       f"does not divide into {pods} pods of {per_pod} leaves", True))
        per_pod_spines = spine_spec.count // pods
    else:
        found = smallest_divisor(up, per_pod * up / max(1, spine_down_cap))
        if found is None:
            raise _Unbuildable(Problem("NET001", ("fabrics", fab.name, "pod"), f"a pod of {per_pod} leaves x {up} "
                                       f"uplinks does not fit on {up} spines of {spine_down_cap} downlinks", True))
        per_pod_spines = found
    spine_down = per_pod * math.ceil(up / per_pod_spines)
    if spine_down > spine_down_cap:
        raise _Unbuildable(Problem("NET001", spine_path, f"spine: {per_pod} leaves x {math.ceil(up / per_pod_spines)} "
                                   f"links = {spine_down} downlinks > the {spine_down_cap} a {spine_sw.id} has at "
                                   f"{speed:g}G with its uplinks", True))
    if up % per_pod_spines:
        problems.append(Problem("NET006", spine_path, f"spine: {up} uplinks per leaf do not divide over "
                                f"{per_pod_spines} spines per pod", False))
    spine_up = uplinks_for(spine_down, speed, speed, taper)
    spine_layout = _layout_or_fail(spine_sw, spine_down, spine_up, speed, speed, spine_path, "spine")
    core_cap = ports_at(core_sw, speed)
    core_links = planned_pods * spine_up
    if core_spec is not None and core_spec.count is not None:
        if core_spec.count % per_pod_spines:
            raise _Unbuildable(Problem("NET007", core_path, f"core count {core_spec.count} is declared, which does "
                                       f"not divide into {per_pod_spines} core groups (one per spine of a pod)",
                                       True))
        per_group = core_spec.count // per_pod_spines
        if planned_pods * math.ceil(spine_up / per_group) > core_cap:
            raise _Unbuildable(Problem("NET001", core_path, f"core: {planned_pods} pods x "
                                       f"{math.ceil(spine_up / per_group)} links > {core_cap} ports", True))
        if spine_up % per_group:
            problems.append(Problem("NET006", core_path, f"core: {spine_up} spine uplinks do not divide over "
                                    f"{per_group} cores per group", False))
    else:
        found = smallest_divisor(spine_up, core_links / max(1, core_cap))
        if found is None:
            raise _Unbuildable(Problem("NET001", core_path, f"{planned_pods} pods exceed what one core layer of "
                                       f"{core_sw.id} ({core_cap} ports) can join; a fourth tier or a larger radix "
                                       "is needed", True))
        per_group = found
    core_taper, core_declared = _taper(fab, core_spec) if core_spec else (1.0, False)
    core_down = planned_pods * math.ceil(spine_up / per_group)
    core_layout = _layout_or_fail(core_sw, core_down, 0, speed, speed, core_path, "core")
    spine_t = TierSize("spine", spine_sw, pods * per_pod_spines, spine_down, spine_up, speed, speed, spine_layout,
                       spine_path, taper, declared)
    core_t = TierSize("core", core_sw, per_pod_spines * per_group, core_down, 0, speed, speed, core_layout,
                      core_path, core_taper, core_declared)
    return spine_t, core_t, per_pod_spines, per_group


def _placeholder(fab: ResolvedFabric) -> PlaneSize:
    """The shape of a fabric that cannot be built: one leaf, no links (its problem says why)."""
    sw = next(t.switch for t in fab.tiers if t.role == "leaf")
    empty = layout(sw, 0, 0, fab.spec.speed_gbps, fab.spec.speed_gbps)
    assert empty is not None
    tier = TierSize("leaf", sw, 1, 0, 0, fab.spec.speed_gbps, fab.spec.speed_gbps, empty, _tier_path(fab, "leaf"),
                    1.0, False)
    return PlaneSize(1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, (tier,), 0, 0)
