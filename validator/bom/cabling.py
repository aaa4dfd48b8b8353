"""The cabling plan: one row per link, A end to Z end, with racks, media, parts and length class.

Rows are generated, never stored: `iter_runs` streams them for the BOM counts, CSV and the workbook.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from validator.bom.layout import Layout, Place
from validator.bom.media import Media, MediaChooser
from validator.topology.build import Link, Topology, iter_links

CABLING_COLUMNS = ("fabric", "a_device", "a_port", "a_rack", "a_ru", "z_device", "z_port", "z_rack", "z_ru",
                   "speed_gbps", "media", "a_transceiver", "z_transceiver", "cable", "length_m")


@dataclass(frozen=True)
class Run:
    link: Link
    a: Place
    z: Place
    media: Media
    run_m: float


class Plan:
    """The layout and media choices of one topology, shared by the BOM, the cabling plan and the rules."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.layout = Layout(topology)
        self.chooser = MediaChooser(topology.resolved.catalog)
        server = topology.resolved.server
        self._node_twin: dict[str, bool] = {name: (links.ports_per_cage > 1) for name, links in server.links.items()}
        self._node_form: dict[str, str] = {name: topology.resolved.catalog.nic(links.nic).form_factor
                                           for name, links in server.links.items()
                                           if topology.resolved.catalog.find("nic", links.nic)}

    def place(self, fabric: str, role: str, index: int) -> Place:
        if role == "server":
            return self.layout.server(index)
        if role in ("leaf", "spine", "core"):
            return self.layout.switch(fabric, role, index)
        if "/" in role:  # a switch management port: the switch's own place
            other, tier = role.split("/")
            return self.layout.switch(other, tier, index)
        return Place(self.layout.central_start, 1)   # storage nodes, UFM and other appliances

    def runs(self, fabric: str) -> Iterator[Run]:
        spec = getattr(self.topology.resolved.design.fabrics, fabric)
        forced_servers = spec.media.servers if spec.media else None
        forced_switches = spec.media.switches if spec.media else None
        for link in iter_links(self.topology, fabric):
            a = self.place(fabric, link.a_role, link.a_index)
            z = self.place(fabric, link.z_role, link.z_index)
            length = self.layout.distance_m(a.rack, z.rack)
            node = link.a_role == "server"
            media = self.chooser.choose(link.speed_gbps, length, a.rack == z.rack, node,
                                        self._node_twin.get(fabric, False) if node else False,
                                        self._node_form.get(fabric) if node else None,
                                        forced_servers if link.a_role not in ("leaf", "spine") else forced_switches)
            yield Run(link, a, z, media, length)

    def all_runs(self) -> Iterator[Run]:
        for fabric in self.topology.fabrics:
            yield from self.runs(fabric)

    def row(self, run: Run) -> tuple[object, ...]:
        link, m = run.link, run.media
        return (link.fabric, link.a_device, link.a_port, self.layout.rack_name(run.a.rack), run.a.ru,
                link.z_device, link.z_port, self.layout.rack_name(run.z.rack), run.z.ru, link.speed_gbps, m.kind,
                m.a_transceiver.id if m.a_transceiver else "", m.z_transceiver.id if m.z_transceiver else "",
                m.cable.id if m.cable else "UNRESOLVED", m.length_m)
