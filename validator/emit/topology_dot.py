"""`clusterplan topology --view devices`: every device and every link, streamed (a 100k-GPU design is
never held in memory as a graph).

DOT follows NVIDIA Air's import format (docs.nvidia.com/networking-ethernet-software/nvidia-air/
Custom-Topology, "DOT Syntax"): `graph "name" { "node" [function="leaf" ...]  "a":"port" -- "b":"port" }`,
one node per device and one edge per link with the port at each end. Switch ports are named as NVUE and
Cumulus Linux name them (swp<cage>, swp<cage>s<sub> for a broken-out cage, from the layout of
`validator.expand.ports`), a management port eth0. A server's data ports are eth1, eth2, ... numbered over
the fabrics in the order compute, storage, in-band; a storage node's or appliance's from eth1 on each
fabric; every out-of-band port is eth0. The other node attributes (model, fabric, rack, ru) are
informational. JSON carries the same nodes and links (schemas/topology.schema.json).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from validator.base.facts import fact
from validator.derive.links import device_namer, link_tuples
from validator.derive.placement import Layout
from validator.expand.sizing import TierSize
from validator.expand.topology import Topology

TOPOLOGY_VERSION = 1
DATA_FABRICS = ("compute", "storage", "inband")


def dot_string(text: str) -> str:
    """A DOT double-quoted string: quotes and backslashes escaped, line breaks flattened."""
    flat = " ".join(str(text).splitlines())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot_label(text: str) -> str:
    """A DOT label: escaped as `dot_string`, its line breaks as DOT's centred line breaks."""
    lines = [line.replace("\\", "\\\\").replace('"', '\\"') for line in str(text).split("\n")]
    return '"' + "\\n".join(" ".join(line.splitlines()) for line in lines) + '"'


def nvue_port(tier: TierSize, number: int) -> str:
    slot = tier.layout.slot(number)
    return f"swp{slot.first_cage + 1}" if slot.per_cage == 1 else f"swp{slot.first_cage + 1}s{slot.sub}"


@fact
class Node:
    name: str
    function: str          # server, leaf, spine, core, storage, an appliance name, rack-system
    fabric: str            # the fabric a switch belongs to; "" for endpoints
    model: str
    rack: str | None
    ru: int | None


class DeviceGraph:
    """Nodes and links of the selected fabrics, generated on demand."""

    def __init__(self, topology: Topology, fabrics: list[str] | None = None) -> None:
        self.t = topology
        self.fabrics = [f for f in topology.fabrics if fabrics is None or f in fabrics]
        self.layout = Layout(topology)
        self.offset: dict[str, int] = {}
        first = 0
        for f in DATA_FABRICS:
            if f in topology.fabrics:
                self.offset[f] = first
                first += topology.resolved.fabrics[f].links_per_server

    def _place(self, where: tuple[int, int] | None) -> tuple[str | None, int | None]:
        if where is None:
            return None, None
        return self.layout.rack_name(where[0]), where[1]

    def nodes(self) -> Iterator[Node]:
        t, plan = self.t, self.t.racks
        oob_roles = {role for u in plan.oob_units for role, _, _ in u.endpoints} if "oob" in self.fabrics else set()
        if any(t.resolved.fabrics[f].links_per_server for f in self.fabrics if f != "oob") or "server" in oob_roles:
            namer = device_namer(t, "compute", "server")
            for s in range(t.servers):
                yield Node(namer(s), "server", "", t.resolved.server.id, *self._place(plan.server(s)))
        switch_fabrics = [f for f in t.fabrics if f in self.fabrics or any(r.startswith(f"{f}/") for r in oob_roles)]
        for f in switch_fabrics:
            fab = t.fabrics[f]
            for tier in fab.tiers:
                places = plan.switches.get((f, tier.role), [])
                for i, name in enumerate(fab.names(tier.role)):
                    yield Node(name, tier.role, f, tier.switch.id, *self._place(places[i] if i < len(places) else None))
        yield from self._endpoints(oob_roles)

    def _endpoints(self, oob_roles: set[str]) -> Iterator[Node]:
        t, plan = self.t, self.t.racks
        storage = t.resolved.design.storage
        if t.storage_nodes and (("storage" in self.fabrics and storage and storage.nodes) or "storage" in oob_roles):
            namer = device_namer(t, "storage", "storage")
            for i in range(t.storage_nodes):
                yield Node(namer(i), "storage", "", "storage-node", *self._place(plan.appliance("storage", i)))
        for f in self.fabrics:
            spec = getattr(t.resolved.design.fabrics, f)
            for e in spec.extra_endpoints:
                namer = device_namer(t, f, e.name)
                for i in range(e.count):
                    yield Node(namer(i), e.name, "", e.name, *self._place(plan.appliance(e.name, i)))
        if "rack-system" in oob_roles:
            namer = device_namer(t, "oob", "rack-system")
            for u in plan.oob_units:
                for role, first, count in u.endpoints:
                    if role == "rack-system":
                        for i in range(first, first + count):
                            yield Node(namer(i), "rack-system", "", "rack-system", None, None)

    def links(self) -> Iterator[tuple[str, str, str, str, str, float]]:
        """(fabric, a, a_port, z, z_port, speed) of every link of the selected fabrics."""
        for f in self.fabrics:
            namers: dict[str, Callable[[int], str]] = {}
            fab = self.t.fabrics[f]
            tiers = {t.role: t for t in fab.tiers}
            for a_role, a_idx, a_port, z_role, z_idx, z_port, speed in link_tuples(self.t, f):
                if a_role not in namers:
                    namers[a_role] = device_namer(self.t, f, a_role)
                if z_role not in namers:
                    namers[z_role] = device_namer(self.t, f, z_role)
                yield (f, namers[a_role](a_idx), self._a_port(f, a_role, a_port, tiers), namers[z_role](z_idx),
                       nvue_port(tiers[z_role], z_port), speed)

    def _a_port(self, fabric: str, role: str, port: int | str, tiers: dict[str, TierSize]) -> str:
        if isinstance(port, int) and role in tiers and role in ("leaf", "spine", "core"):
            return nvue_port(tiers[role], port)
        if port == "mgmt" or fabric == "oob":
            return "eth0"
        return f"eth{(self.offset.get(fabric, 0) if role == 'server' else 0) + int(port)}"


def _attrs(n: Node) -> str:
    pairs = [("function", n.function), ("model", n.model)]
    if n.fabric:
        pairs.append(("fabric", n.fabric))
    if n.rack is not None:
        pairs += [("rack", n.rack), ("ru", str(n.ru))]
    return " ".join(f"{k}={dot_string(v)}" for k, v in pairs)


def device_dot(topology: Topology, fabrics: list[str] | None = None) -> Iterator[str]:
    """The DOT text, a line at a time."""
    g = DeviceGraph(topology, fabrics)
    yield f"graph {dot_string(topology.resolved.design.metadata.name)} {{\n"
    for n in g.nodes():
        yield f"  {dot_string(n.name)} [ {_attrs(n)} ]\n"
    for _f, a, ap, z, zp, _s in g.links():
        yield f"  {dot_string(a)}:{dot_string(ap)} -- {dot_string(z)}:{dot_string(zp)}\n"
    yield "}\n"


def device_json(topology: Topology, fabrics: list[str] | None = None) -> Iterator[str]:
    """The JSON text (schemas/topology.schema.json), a node or link at a time."""
    g = DeviceGraph(topology, fabrics)
    head = {"version": TOPOLOGY_VERSION, "view": "devices", "name": topology.resolved.design.metadata.name,
            "file": topology.resolved.file, "fabrics": g.fabrics}
    yield json.dumps(head, sort_keys=True)[:-1] + ', "nodes": ['
    sep = "\n"
    for n in g.nodes():
        yield sep + json.dumps({"name": n.name, "function": n.function, "fabric": n.fabric or None,
                                "model": n.model, "rack": n.rack, "ru": n.ru}, sort_keys=True)
        sep = ",\n"
    yield '\n], "links": ['
    sep = "\n"
    for f, a, ap, z, zp, s in g.links():
        yield sep + json.dumps({"fabric": f, "a": a, "a_port": ap, "z": z, "z_port": zp, "speed_gbps": s},
                               sort_keys=True)
        sep = ",\n"
    yield "\n]}\n"
