"""Fabric sizing: switches per tier, from real port counts, one plane at a time.

A plane (the whole fabric unless the design declares several) is built bottom-up, as the NVIDIA
DGX SuperPOD reference architectures build theirs:

- **Leaves.** Servers are grouped in scalable units (SU). In an SU every rail (a NIC index of a
  rail-optimized fabric; the whole server of a fat-tree; one side of a dual-ToR pair) gets a rail
  group of leaves, enough for the SU's ports of that rail. Leaves are built for whole SUs. A leaf has
  D downlinks and U uplinks with D x speed / (U x uplink speed) = the tier's taper (1:1 by default).
  Appliances (UFM, storage nodes) take free leaf ports, then leaves of their own. Without `growth:`,
  D and U are those in use on the fullest leaf, and a leaf with fewer downlinks in use gets fewer
  uplinks (validator/expand/growth.py); with it, every leaf is uplinked for all its downlinks.
- **Two tiers.** Every leaf reaches every spine. The spine count S is the smallest divisor of U
  whose S spines hold the L x U leaf uplinks (growth SUs included; a training compute fabric at least
  4 when U allows): each leaf-spine pair then carries the same U / S links ("even striping"). On
  Ethernet, when no spine reaches every leaf at the uplink speed, the uplinks are broken out to a
  lower speed at which one does, before a core tier is added.
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
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from validator.base.facts import fact
from validator.expand.growth import (
    growth_sus,
    leaf_ports_used,
    partial_uplinks,
    pod_spine_uplinks,
    uplinks_in_use,
    used_downlinks,
)
from validator.expand.plane import (
    FabricSize,
    PlaneSize,
    Problem,
    TierSize,
    Unbuildable,
    layout_or_fail,
    parse_ratio,
    smallest_divisor,
    taper_of,
    tier_path,
)
from validator.expand.ports import dedicated_uplinks, layout, most_downlinks, ports_at, uplinks_for
from validator.expand.upper import leaves_per_pod, three_tier, too_few_spines, two_tier
from validator.resolve.catalog.entries import Switch
from validator.resolve.resolved import ResolvedFabric, ResolvedTier

__all__ = ["FabricSize", "PlaneSize", "Problem", "TierSize", "parse_ratio", "placement", "planes_and_rails",
           "size_fabric", "smallest_divisor"]


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
        most = most_downlinks(leaf, speed, tier.up_speed(speed), taper_of(fab, tier)[0], True)
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
                extra_links: int, leaf_count: int | None = None, min_spines: int = 0) -> FabricSize:
    """Size one fabric; `extra_links` are appliance ports on each plane (storage nodes, UFM, mgmt).

    `leaf_count` pins the leaves when the floor plan decides them (out-of-band leaves, one per rack);
    `min_spines` is the fewest spines a two-tier plane gets when its leaves' uplinks allow (growth.spine_floor).
    """
    problems: list[Problem] = []
    try:
        plane = _size_plane(fab, servers, servers_per_rack, gpus_per_server, extra_links, problems, leaf_count,
                            min_spines)
    except Unbuildable as exc:
        problems.append(exc.problem)
        plane = _placeholder(fab)
    planes, _, _ = planes_and_rails(fab)
    return FabricSize(planes, plane, problems)


def _size_plane(fab: ResolvedFabric, servers: int, servers_per_rack: int, gpus_per_server: int, extra: int,
                problems: list[Problem], leaf_count: int | None, min_spines: int = 0) -> PlaneSize:
    spec = fab.spec
    roles = {t.role: t for t in fab.tiers}
    spine, core = roles.get("spine"), roles.get("core")
    planes, rails, ppr = _checked_planes(fab)
    links = fab.links_per_server
    endpoint = servers * (links // planes if links else 0)
    def leaves_for(variant: ResolvedFabric, into: list[Problem]) -> _Leaves:
        return _leaf_tier(variant, servers, servers_per_rack, extra, leaf_count, (rails, ppr, endpoint),
                          (spine, min_spines), into)

    lv = leaves_for(fab, problems)
    if spine is not None and core is None:
        lv = _uplink_breakout(fab, lv, spine.switch, min_spines, leaves_for)
    leaf = lv.tier
    shape: dict[str, Any] = dict(
        rails=rails, ports_per_rail=ppr, su_servers=lv.su, sus=lv.sus, planned_sus=lv.planned_sus,
        leaves_per_rail=lv.leaves_per_rail, servers_per_leaf=lv.servers_per_leaf, server_leaves=lv.server_leaves,
        endpoint_links=endpoint, extra_links=extra)
    if spine is None:
        return PlaneSize(**shape, leaves_per_pod=leaf.count, spines_per_pod=0, cores_per_group=0, tiers=(leaf,))
    spine_spec = spec.tiers.spine
    assert spine_spec is not None
    two = two_tier(fab, leaf, lv.planned_leaves, spine.switch, spine_spec, problems, min_spines)
    if two is not None and core is None:
        return _as_used(PlaneSize(**shape, leaves_per_pod=leaf.count, spines_per_pod=two.count, cores_per_group=0,
                                  tiers=(leaf, two)), lv, servers)
    if spine_spec.count is not None and core is None:
        raise Unbuildable(Problem("NET001", tier_path(fab, "spine"), too_few_spines(
            leaf, lv.planned_leaves, spine.switch, spine_spec.count), True))
    per_pod = leaves_per_pod(fab, leaf, spine.switch, leaf.up_speed_gbps, lv.su, lv.leaves_per_rail, rails,
                             lv.servers_per_leaf, gpus_per_server)
    spine_t, core_t, spines_per_pod, cores_per_group = three_tier(
        fab, leaf, leaf.count, lv.planned_leaves, per_pod, spine.switch, core.switch if core else spine.switch,
        problems)
    return _as_used(PlaneSize(**shape, leaves_per_pod=per_pod, spines_per_pod=spines_per_pod,
                              cores_per_group=cores_per_group, tiers=(leaf, spine_t, core_t)), lv, servers)


def _uplink_breakout(fab: ResolvedFabric, lv: _Leaves, spine_sw: Switch, min_spines: int,
                     leaves_for: Callable[[ResolvedFabric, list[Problem]], _Leaves]) -> _Leaves:
    """Two tiers wherever one spine layer reaches every leaf: on an Ethernet fabric whose spines cannot reach
    every leaf at the uplink speed, the leaves' uplinks broken out to the fastest lower speed both switches'
    cages give at which they can (the DGX B300 Spectrum-X SuperPOD runs its 800G SN5600 cages as 2 x 400G:
    two tiers at 8 and 16 SU). InfiniBand keeps its speed and adds a core, as the DGX SuperPOD tables do;
    a declared spine count, uplink count or uplink speed is kept as declared."""
    spec = fab.spec
    spine_spec, leaf_spec = spec.tiers.spine, spec.tiers.leaf
    if spec.type == "infiniband" or spine_spec is None or spine_spec.count is not None or \
            leaf_spec.uplink_speed_gbps is not None or leaf_spec.uplinks is not None:
        return lv
    if _two_tier_fits(fab, lv, spine_sw, min_spines):
        return lv
    speeds = {s for g in lv.tier.switch.port_groups for s in g.ports_per_cage} & \
        {s for g in spine_sw.port_groups for s in g.ports_per_cage}
    for speed in sorted((s for s in speeds if s < lv.tier.up_speed_gbps), reverse=True):
        leaf = leaf_spec.model_copy(update={"uplink_speed_gbps": float(speed)})
        variant = replace(fab, spec=spec.model_copy(update={"tiers": spec.tiers.model_copy(update={"leaf": leaf})}))
        try:
            found = leaves_for(variant, [])
        except Unbuildable:
            continue
        if _two_tier_fits(fab, found, spine_sw, min_spines):
            return found
    return lv


def _two_tier_fits(fab: ResolvedFabric, lv: _Leaves, spine_sw: Switch, min_spines: int) -> bool:
    spine_spec = fab.spec.tiers.spine
    assert spine_spec is not None
    try:
        return two_tier(fab, lv.tier, lv.planned_leaves, spine_sw, spine_spec, [], min_spines) is not None
    except Unbuildable:
        return False


def _as_used(plane: PlaneSize, lv: _Leaves, servers: int) -> PlaneSize:
    """The plane with each leaf that uses fewer downlinks than the fullest one (a partial SU, the short leaf of
    a rail group) uplinked for its own downlinks in use (growth.py)."""
    if not lv.as_used or not lv.su:
        return plane
    leaf = plane.tiers[0]
    used = leaf_ports_used(servers, (lv.su, plane.rails, lv.leaves_per_rail, lv.servers_per_leaf,
                                     plane.ports_per_rail), leaf.down_ports, plane.extra_links, leaf.count)
    ups = partial_uplinks(used, leaf.up_ports, plane.spines_per_pod, (leaf.down_speed_gbps, leaf.up_speed_gbps),
                          leaf.taper)
    first = next((i for i, u in enumerate(ups) if u < leaf.up_ports), len(ups))
    if first < len(ups):
        plane = replace(plane, partial_from=first, partial_ups=ups[first:])
    if len(plane.tiers) == 3:
        spine = plane.tiers[1]
        pods = pod_spine_uplinks(ups, plane.leaves_per_pod, plane.spines_per_pod, spine.up_ports,
                                 plane.cores_per_group, spine.taper, (spine.down_speed_gbps, spine.up_speed_gbps))
        if any(u < spine.up_ports for u in pods):
            plane = replace(plane, pod_spine_ups=pods)
    return plane


def _checked_planes(fab: ResolvedFabric) -> tuple[int, int, int]:
    """planes_and_rails(), once the leaf switch has ports at the speed and the links split over the planes."""
    spec = fab.spec
    leaf_sw = next(t.switch for t in fab.tiers if t.role == "leaf")
    if ports_at(leaf_sw, spec.speed_gbps) == 0:
        raise Unbuildable(Problem("TOP001", tier_path(fab, "leaf"), f"leaf switch {leaf_sw.id} has no "
                                  f"{spec.speed_gbps:g}G ports", True))
    planes, rails, ppr = planes_and_rails(fab)
    links = fab.links_per_server
    if links and links % planes:
        raise Unbuildable(Problem("NET007", ("fabrics", fab.name, "planes"),
                                  f"{links} server links do not split over {planes} planes", True))
    mapping = spec.nic_to_rail
    if spec.topology == "rail-optimized" and mapping is not None and sorted(mapping) != list(range(len(mapping))):
        raise Unbuildable(Problem("NET007", ("fabrics", fab.name, "nic_to_rail"), f"nic_to_rail {mapping} sends two "
                                  "NICs to one rail (or skips one): it must name each rail once", True))
    return planes, rails, ppr


@fact
class _Leaves:
    """What the leaf tier decides: the tier, the scalable unit and how many leaves (built and planned)."""

    tier: TierSize
    su: int
    sus: int
    planned_sus: int
    leaves_per_rail: int
    servers_per_leaf: int
    server_leaves: int
    planned_leaves: int
    as_used: bool = False     # the leaf ports follow the downlinks in use (no growth declared)


@fact
class _LeafPorts:
    down: int
    up: int
    up_speed: float
    taper: float
    declared: bool
    tor: bool
    rack_ports: int


def _leaf_ports(fab: ResolvedFabric, servers_per_rack: int, per_plane: int, has_upper: bool,
                problems: list[Problem]) -> _LeafPorts:
    """Downlinks and uplinks of one leaf: the declared numbers, else as many downlinks as the taper allows (a
    top-of-rack leaf: its rack's ports), and the uplinks the taper asks for them."""
    spec = fab.spec
    speed = spec.speed_gbps
    leaf_sw = next(t.switch for t in fab.tiers if t.role == "leaf")
    leaf_spec = spec.tiers.leaf
    taper, declared = taper_of(fab, leaf_spec)
    up_speed = leaf_spec.up_speed(speed)
    dedicated = dedicated_uplinks(leaf_sw, speed) if has_upper and leaf_spec.uplink_speed_gbps is None else None
    if dedicated:
        up_speed = dedicated[1]
    most = most_downlinks(leaf_sw, speed, up_speed, taper, has_upper)
    tor = placement(fab, "leaf", servers_per_rack) == "rack" and fab.name != "oob" and spec.topology == "fat-tree"
    rack_ports = servers_per_rack * per_plane
    down = leaf_spec.downlinks or (min(most, rack_ports) if tor and rack_ports else most)
    want = uplinks_for(down, speed, up_speed, taper) if has_upper else 0
    up = leaf_spec.uplinks if has_upper and leaf_spec.uplinks is not None else want
    if dedicated and leaf_spec.uplinks is None:
        up = min(dedicated[0], want)
    if has_upper and up == 0:
        raise Unbuildable(Problem("TOP001", tier_path(fab, "leaf"), f"leaf {leaf_sw.id} has no port left for "
                                  "uplinks", True))
    wanted = uplinks_for(down, speed, up_speed, taper)
    if leaf_spec.uplinks is not None and leaf_spec.downlinks is not None and leaf_spec.oversubscription and \
            wanted != up:
        problems.append(Problem("NET007", tier_path(fab, "leaf"), f"leaf: {down} x {speed:g}G down at "
                                f"{leaf_spec.oversubscription} needs {wanted} x {up_speed:g}G up, but "
                                f"uplinks: {up} is declared", False))
    return _LeafPorts(down, up, up_speed, taper, declared, tor, rack_ports)


def _leaf_tier(fab: ResolvedFabric, servers: int, servers_per_rack: int, extra: int, leaf_count: int | None,
               rails_ppr_endpoint: tuple[int, int, int], spine_floor: tuple[ResolvedTier | None, int],
               problems: list[Problem]) -> _Leaves:
    """Leaves for whole SUs, a rail group per rail, then leaves of their own for the appliances; their ports as
    used (validator/expand/growth.py) unless the design builds for growth."""
    spine, floor = spine_floor
    has_upper = spine is not None
    spec = fab.spec
    speed = spec.speed_gbps
    rails, ppr, endpoint = rails_ppr_endpoint
    leaf_sw = next(t.switch for t in fab.tiers if t.role == "leaf")
    leaf_path = tier_path(fab, "leaf")
    planes, _, _ = planes_and_rails(fab)
    per_plane = fab.links_per_server // planes if fab.links_per_server else 0
    p = _leaf_ports(fab, servers_per_rack, per_plane, has_upper, problems)
    leaf_layout = layout_or_fail(leaf_sw, p.down, p.up, speed, p.up_speed, leaf_path, "leaf")
    servers_per_leaf = max(1, p.down // ppr)
    su = _su_servers(fab, servers_per_rack) or \
        (servers_per_rack if p.tor and p.down >= p.rack_ports else servers_per_leaf)
    leaves_per_rail = math.ceil(su / servers_per_leaf)
    sus = math.ceil(servers / su) if servers and endpoint else 0
    growth = growth_sus(spec)
    planned_sus = max(sus, growth or 0)
    server_leaves = sus * rails * leaves_per_rail
    free = server_leaves * p.down - endpoint
    extra_leaves = math.ceil((extra - free) / p.down) if extra > free else 0
    leaves = max(server_leaves + extra_leaves, leaf_count or 0)
    declared_count = spec.tiers.leaf.count
    if declared_count is not None:
        if declared_count < leaves:
            raise Unbuildable(Problem("NET001", leaf_path, _short_leaves(declared_count, leaves, endpoint, extra,
                                                                          p.down, speed), True))
        leaves = declared_count
    planned_leaves = max(leaves, planned_sus * rails * leaves_per_rail + extra_leaves)
    down, up = p.down, p.up
    leaf_spec = spec.tiers.leaf
    as_used = growth is None and has_upper and bool(endpoint) and leaf_count is None and fab.name != "oob" and \
        leaf_spec.downlinks is None and leaf_spec.uplinks is None and dedicated_uplinks(leaf_sw, speed) is None
    if as_used:
        assert spine is not None
        down = used_downlinks(p.down, min(servers_per_leaf, su, servers), ppr, extra)
        up = uplinks_in_use(down, p.up, (speed, p.up_speed), p.taper, leaves, ports_at(spine.switch, p.up_speed),
                            floor, spec.tiers.spine.count if spec.tiers.spine else None)
        leaf_layout = layout_or_fail(leaf_sw, down, up, speed, p.up_speed, leaf_path, "leaf")
    tier = TierSize("leaf", leaf_sw, leaves, down, up, speed, p.up_speed, leaf_layout, leaf_path, p.taper,
                    p.declared)
    return _Leaves(tier, su, sus, planned_sus, leaves_per_rail, servers_per_leaf, server_leaves, planned_leaves,
                   as_used)


def _su_servers(fab: ResolvedFabric, servers_per_rack: int) -> int | None:
    spec = fab.spec
    if spec.scalable_unit is not None:
        if spec.scalable_unit.servers:
            return spec.scalable_unit.servers
        if spec.scalable_unit.racks:
            return spec.scalable_unit.racks * servers_per_rack
    return spec.scalable_unit_servers


def _short_leaves(declared: int, needed: int, endpoint: int, extra: int, down: int, speed: float) -> str:
    return (f"leaf count {declared} is declared, but {endpoint:,} server links + {extra:,} appliance links at "
            f"{speed:g}G need {needed} leaves of {down} downlinks (whole SUs, one rail group per rail)")


def _placeholder(fab: ResolvedFabric) -> PlaneSize:
    """The shape of a fabric that cannot be built: one leaf, no links (its problem says why)."""
    sw = next(t.switch for t in fab.tiers if t.role == "leaf")
    empty = layout(sw, 0, 0, fab.spec.speed_gbps, fab.spec.speed_gbps)
    assert empty is not None
    tier = TierSize("leaf", sw, 1, 0, 0, fab.spec.speed_gbps, fab.spec.speed_gbps, empty, tier_path(fab, "leaf"),
                    1.0, False)
    return PlaneSize(1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, (tier,), 0, 0)
