"""The classes of component a design has, each with the failure of every member (the derive stage).

Members come from the expanded topology and the rack plan: switches by tier, links by bundle, servers,
NVLink domains, racks (every device standing in them), CDUs (the GPU racks each cools), rear doors and
storage nodes. A class with more members than `MAX_MEMBERS` is sampled evenly (first and last included),
and says so: members of one class are alike by construction, the sample guards the partial last unit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from validator.base.errors import Path
from validator.base.facts import fact
from validator.derive.failures.graph import ENDPOINT_TIER, FabricGraph
from validator.derive.failures.impact import Failure
from validator.derive.links import device_namer
from validator.derive.placement import Layout
from validator.expand.racks import Rack
from validator.expand.topology import Topology

MAX_MEMBERS = 400


@fact
class Member:
    name: str
    failure: Failure


@fact
class ComponentClass:
    name: str                  # e.g. "compute spine"
    kind: str                  # switch, link, server, nvlink-domain, gpu-rack, network-rack, pdu, cdu, ...
    fabric: str | None
    count: int
    path: Path                 # the design key that decides this class
    members: Callable[[], Iterator[Member]]


def sample(n: int) -> list[int]:
    """Every index below n, or MAX_MEMBERS of them evenly spread (first and last included)."""
    if n <= MAX_MEMBERS:
        return list(range(n))
    return sorted({round(k * (n - 1) / (MAX_MEMBERS - 1)) for k in range(MAX_MEMBERS)})


def switch_classes(topology: Topology, graphs: dict[str, FabricGraph]) -> Iterator[ComponentClass]:
    for name, fab in topology.fabrics.items():
        if name not in graphs:
            continue
        for tier in fab.tiers:
            namer, role, count = fab.namer(tier.role), tier.role, fab.count(tier.role)

            def members(namer: Callable[[int], str] = namer, role: str = role, count: int = count,
                        fabric: str = name) -> Iterator[Member]:
                for i in sample(count):
                    yield Member(namer(i), Failure(switches=frozenset({(fabric, role, i)})))

            kind = "oob-switch" if name == "oob" else "switch"
            yield ComponentClass(f"{name} {role}", kind, name, count, ("fabrics", name, "tiers", role), members)


def link_classes(topology: Topology, graphs: dict[str, FabricGraph]) -> Iterator[ComponentClass]:
    """One link of each bundle of each data fabric: a server's link (each of its links tried), the links of
    the first leaf (and spine) to each switch above it."""
    for name, g in graphs.items():
        if name == "oob":
            continue
        first = min(g.server_leaves, default=None)
        if first is not None:
            links = len(g.server_leaves[first])
            server = device_namer(topology, name, "server")(first)

            def server_links(fabric: str = name, s: int = first, n: int = links, who: str = server) -> Iterator[Member]:
                for k in range(n):
                    yield Member(f"{who} link {k + 1}", Failure(server_link=(fabric, s, k)))

            yield ComponentClass(f"{name} link server-leaf", "link", name, g.links[ENDPOINT_TIER],
                                 ("fabrics", name, "speed_gbps"), server_links)
        for role in g.tiers[:-1]:
            upper = g.upper_of(role)
            assert upper is not None
            ups = g.up.get((role, 0), {})
            if not ups:
                continue
            def switch_links(fabric: str = name, role: str = role, upper: str = upper,
                             ups: dict[int, int] = ups) -> Iterator[Member]:
                namer = topology.fabrics[fabric].namer
                low, high = namer(role)(0), namer(upper)
                for j in sorted(ups):
                    yield Member(f"{low} - {high(j)}", Failure(switch_link=(fabric, role, 0, j)))

            yield ComponentClass(f"{name} link {role}-{upper}", "link", name, g.links[f"{role}-{upper}"],
                                 ("fabrics", name, "tiers", upper), switch_links)


def server_classes(topology: Topology) -> Iterator[ComponentClass]:
    namer = device_namer(topology, "compute", "server")
    n = topology.servers

    def servers() -> Iterator[Member]:
        for s in sample(n):
            yield Member(namer(s), Failure(servers=frozenset({s})))

    yield ComponentClass("server", "server", None, n, ("compute", "server"), servers)
    per = max(1, topology.nvlink_domain_gpus // topology.resolved.server.gpus)
    domains = math.ceil(n / per)

    def nvlink() -> Iterator[Member]:
        for d in sample(domains):
            yield Member(f"NVLink domain {d + 1}", Failure(servers=frozenset(range(d * per, min(n, (d + 1) * per)))))

    yield ComponentClass("NVLink domain", "nvlink-domain", None, domains, ("compute", "nvlink_domain_gpus"), nvlink)


def rack_failure(rack: Rack) -> Failure:
    """Everything standing in a rack fails with it."""
    servers, switches, endpoints = set(), set(), set()
    for u in rack.units:
        if u.kind == "server":
            servers.add(u.index)
        elif u.kind == "switch":
            switches.add((u.fabric, u.role, u.index))
        elif u.kind in ("storage", "appliance"):
            endpoints.add((u.role, u.index))
    return Failure(frozenset(servers), frozenset(switches), frozenset(endpoints))


def rack_classes(topology: Topology, layout: Layout) -> Iterator[ComponentClass]:
    racks = topology.racks.racks
    for kind, label in (("gpu", "GPU rack"), ("network", "network rack"), ("storage", "storage rack")):
        mine = [r for r in racks if r.kind == kind]
        if not mine:
            continue

        def members(mine: list[Rack] = mine) -> Iterator[Member]:
            for k in sample(len(mine)):
                yield Member(layout.rack_name(mine[k].index), rack_failure(mine[k]))

        yield ComponentClass(label, f"{kind}-rack", None, len(mine), ("site", "rack"), members)


def cooling_classes(topology: Topology, per_cdu: int | None) -> Iterator[ComponentClass]:
    """CDUs (liquid) cool `per_cdu` GPU racks each, in floor order; a rear door cools its own rack. Their
    servers stop; switches in those racks are taken to be air-cooled and keep running."""
    plan = topology.racks
    gpu = [plan.racks[i] for i in plan.gpu_rack_at]
    site = topology.resolved.design.site.rack

    def servers_of(racks: list[Rack]) -> frozenset[int]:
        return frozenset(u.index for r in racks for u in r.units if u.kind == "server")

    if site.cooling == "liquid" and site.cdu and per_cdu:
        groups = math.ceil(len(gpu) / per_cdu)

        def cdus() -> Iterator[Member]:
            for k in sample(groups):
                yield Member(f"CDU {k + 1}", Failure(servers=servers_of(gpu[k * per_cdu:(k + 1) * per_cdu])))

        yield ComponentClass("CDU", "cdu", None, groups, ("site", "rack", "racks_per_cdu"), cdus)
    if site.cooling == "rear-door" and site.rear_door:

        def doors() -> Iterator[Member]:
            for k in sample(len(gpu)):
                yield Member(f"rear door of GPU rack {k + 1}", Failure(servers=servers_of([gpu[k]])))

        yield ComponentClass("rear-door heat exchanger", "rear-door", None, len(gpu), ("site", "rack", "rear_door"),
                             doors)


def storage_classes(topology: Topology) -> Iterator[ComponentClass]:
    n = topology.storage_nodes
    if not n:
        return

    def nodes() -> Iterator[Member]:
        namer = device_namer(topology, "storage", "storage")
        for i in sample(n):
            yield Member(namer(i), Failure(endpoints=frozenset({("storage", i)})))

    yield ComponentClass("storage node", "storage-node", None, n, ("storage", "nodes", "count"), nodes)
