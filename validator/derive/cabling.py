"""The cabling plan: one row per link, A end to Z end, with racks, media, parts and length class.

Two views of the same links. `runs()` streams every link with names, for the cabling plan. `tally`
counts cables and transceivers in one pass over name-free tuples, choosing media once per pair of
racks, for the BOM and the optics rule: a 100k-GPU design never holds its links as objects.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from validator.base.facts import fact
from validator.derive.links import Link, iter_links
from validator.derive.media import ANY_CAGE, Cage, Media, MediaChooser
from validator.derive.pairs import LinkSummary, Usage, link_pairs
from validator.derive.placement import Layout, Place
from validator.derive.port_names import cable_id, interface_namer
from validator.expand.topology import SWITCH_ROLES, Topology
from validator.resolve.catalog.entries import Nic

# A cable run list as data-centre teams ask for it (Arista AVD #7075, NetBox cables): both ends with site,
# hall, row, rack and rack unit, the media part numbers, the length class bought and the run it covers.
CABLING_COLUMNS = ("fabric", "a_site", "a_hall", "a_row", "a_rack", "a_ru", "a_device", "a_port",
                   "z_site", "z_hall", "z_row", "z_rack", "z_ru", "z_device", "z_port", "speed_gbps", "media",
                   "cable", "a_transceiver", "z_transceiver", "length_class_m", "run_m",
                   "cable_id", "a_interface", "z_interface")
CABLING_WIDTHS = (9, 14, 6, 6, 10, 6, 30, 7, 14, 6, 6, 10, 6, 30, 7, 10, 10, 18, 18, 18, 9, 8, 16, 16, 16)


@fact
class Run:
    link: Link
    a: Place
    z: Place
    media: Media
    run_m: float
    index: int = 0       # the link's place in its fabric's link order (its cable id)


@dataclass
class Tally:
    """Counts over every link, in one pass: what the BOM and the optics rule need."""

    # (fabric, cable, length, A rack, Z rack) -> links: the BOM sums racks away, the rack power keeps them
    cable_runs: Counter[tuple[str, str, float, int, int]] = field(default_factory=Counter)
    node_xcvr: Counter[tuple[str, str, str, int]] = field(default_factory=Counter)  # (fabric, part, role, rack)
    switch_xcvr: dict[tuple[str, str, str], Counter[int]] = field(default_factory=dict)  # -> switch index
    # (fabric, end, problem kind) -> (a role, a index, z role, z index, media, length): one example each
    problems: dict[tuple[str, str, str], tuple[str, int, str, int, Media, float]] = field(default_factory=dict)
    links: int = 0
    summaries: dict[str, LinkSummary] = field(default_factory=dict)   # the same pass's link summary

    @cached_property
    def cables(self) -> Counter[tuple[str, str, float]]:
        """Links per (fabric, cable, length), over every pair of racks."""
        out: Counter[tuple[str, str, float]] = Counter()
        for (fabric, part, length, _a, _z), links in self.cable_runs.items():
            out[(fabric, part, length)] += links
        return out


class _Constant(list[int]):
    """A list-like that answers the same rack for every index (appliances sit in one place)."""

    def __init__(self, value: int) -> None:
        super().__init__()
        self.value = value

    def __getitem__(self, index: object) -> int:  # type: ignore[override]
        return self.value


class Plan:
    """The layout and media choices of one topology, shared by the BOM, the cabling plan and the rules."""

    def __init__(self, topology: Topology, layout: Layout | None = None) -> None:
        self.topology = topology
        self.layout = layout or Layout(topology)
        self.chooser = MediaChooser(topology.resolved.catalog)
        server = topology.resolved.server
        catalog = topology.resolved.catalog
        self._node_twin: dict[str, bool] = {name: (links.ports_per_cage > 1) for name, links in server.links.items()}
        self._nic: dict[str, Nic] = {name: catalog.nic(links.nic) for name, links in server.links.items()
                                     if catalog.find("nic", links.nic)}
        self._cages: dict[tuple[str, str, bool], Cage] = {}
        self._namers: dict[tuple[str, str], Callable[[int | str], str]] = {}

    @cached_property
    def _server_racks(self) -> list[int]:
        return [self.layout.server(s).rack for s in range(self.topology.servers)]

    def place(self, fabric: str, role: str, index: int) -> Place:
        if role == "server":
            return self.layout.server(index)
        if role in SWITCH_ROLES:
            return self.layout.switch(fabric, role, index)
        if "/" in role:  # a switch management port: the switch's own place
            other, tier = role.split("/")
            mgmt = self.topology.fabrics[other].tier(tier)
            per = mgmt.switch.mgmt_ports if mgmt and mgmt.switch.mgmt_ports else 1
            return self.layout.switch(other, tier, index // per)
        if role == "rack-system":
            system = self.topology.resolved.server.rack_system
            per = system.mgmt_ports if system and system.mgmt_ports else 1
            return Place(self.topology.racks.gpu_rack_at[index // per], 1)
        return self.layout.appliance(role, index)   # storage nodes, UFM and other appliances

    def _rack(self, fabric: str, role: str, index: int) -> int:
        if role == "server":
            return self._server_racks[index]
        return self.place(fabric, role, index).rack

    def media(self, fabric: str, a_role: str, a_rack: int, z_rack: int, speed: float,
              z_role: str = "leaf") -> tuple[Media, float]:
        """The media of a link and its run length."""
        spec = getattr(self.topology.resolved.design.fabrics, fabric)
        switch_end = a_role in SWITCH_ROLES
        forced = (spec.media.switches if switch_end else spec.media.servers) if spec.media else None
        node = a_role == "server"
        length = self.layout.distance_m(a_rack, z_rack)
        chosen = self.chooser.choose(speed, length, a_rack == z_rack, node,
                                     self._node_twin.get(fabric, False) if node else False,
                                     self.cage(fabric, a_role, up=True), self.cage(fabric, z_role, up=False), forced)
        return chosen, length

    def cage(self, fabric: str, role: str, up: bool) -> Cage:
        """The cage a link's plug goes in at a device: a switch tier's down- or up-port cage, a server's NIC
        cage (adapter OSFP cages take flat-top modules), a management RJ45, or unknown (appliances)."""
        key = (fabric, role, up)
        found = self._cages.get(key)
        if found is None:
            found = self._cages[key] = self._find_cage(fabric, role, up)
        return found

    def _find_cage(self, fabric: str, role: str, up: bool) -> Cage:
        if role == "server":
            nic = self._nic.get(fabric)
            if nic is None:
                return ANY_CAGE
            return nic.form_factor, nic.top or ("flat" if nic.form_factor == "OSFP" else None)
        if "/" in role or role == "rack-system":
            return "RJ45", None
        tier = self.topology.fabrics[fabric].tier(role) if role in SWITCH_ROLES else None
        if tier is None or not tier.layout.slots:
            return ANY_CAGE
        slot = tier.layout.slots[tier.down_ports] if up and tier.up_ports else tier.layout.slots[0]
        group = tier.switch.port_groups[slot.group]
        return group.form_factor, group.top

    @cached_property
    def tally(self) -> Tally:
        """Cables, transceivers and reach problems over every link (media cached per pair of racks).

        The loop is the hot path of a 100k-GPU design: it walks device pairs (links between the same two
        devices counted together), does one media lookup per pair and two or three counter increments;
        everything else is worked out once per media key.
        """
        out = Tally()
        switch_xcvr: dict[tuple[str, str, str], Counter[int]] = defaultdict(Counter)
        for fabric in self.topology.fabrics:
            out.summaries[fabric] = self._tally_fabric(out, switch_xcvr, fabric)
        out.switch_xcvr = dict(switch_xcvr)
        return out

    def _tally_fabric(self, out: Tally, switch_xcvr: dict[tuple[str, str, str], Counter[int]],
                      fabric: str) -> LinkSummary:
        """One fabric's pairs: the media tally and the link summary in the same pass (locals for speed)."""
        racks: dict[str, list[int]] = {"server": self._server_racks}
        # media key -> (cable key, A-end switch counter or node key or None, Z-end counter or None)
        actions: dict[tuple[str, int, int, float], tuple[tuple[str, str, float, int, int], Any, Any]] = {}
        cables, node_xcvr = out.cable_runs, out.node_xcvr
        usage = Usage(self.topology, fabric)
        down, up, bundles = usage.down, usage.up, usage.bundles
        bundle_role: dict[str, str] = {}
        links = 0
        for a_role, a_idx, z_role, z_idx, n, speed in link_pairs(self.topology, fabric):
            a_racks = racks.get(a_role)
            if a_racks is None:
                a_racks = racks[a_role] = self._racks_of(fabric, a_role)
            z_racks = racks.get(z_role)
            if z_racks is None:
                z_racks = racks[z_role] = self._racks_of(fabric, z_role)
            a_rack, z_rack = a_racks[a_idx], z_racks[z_idx]
            key = (a_role, a_rack, z_rack, speed)
            act = actions.get(key)
            if act is None:
                act = actions[key] = self._action(out, switch_xcvr, fabric, a_role, a_idx, z_role, z_idx,
                                                  a_rack, z_rack, speed)
            cable_key, a_end, z_end = act
            links += n
            cables[cable_key] += n
            if a_end is not None:
                if isinstance(a_end, tuple):
                    node_xcvr[a_end] += n
                else:
                    a_end[a_idx] += n
            if z_end is not None:
                z_end[z_idx] += n
            # the link summary: bundles and ports in use per switch
            name = bundle_role.get(a_role)
            if name is None:
                name = bundle_role[a_role] = a_role.split("/")[0] + "-mgmt" if "/" in a_role else a_role
            bkey = (name, z_role, speed)
            bundles[bkey] = bundles.get(bkey, 0) + n
            down[z_role][z_idx] += n
            ups = up.get(a_role)
            if ups is not None:
                ups[a_idx] += n
        out.links += links
        usage.total = links
        return usage.summary()

    def _action(self, out: Tally, switch_xcvr: dict[tuple[str, str, str], Counter[int]], fabric: str, a_role: str,
                a_idx: int, z_role: str, z_idx: int, a_rack: int, z_rack: int, speed: float
                ) -> tuple[tuple[str, str, float, int, int], Any, Any]:
        m, length = self.media(fabric, a_role, a_rack, z_rack, speed, z_role)
        self._check(out, fabric, a_role, a_idx, z_role, z_idx, a_rack, z_rack, m, length)
        cable_key = (fabric, m.cable.id if m.cable else f"UNRESOLVED-{speed:g}G", m.length_m, a_rack, z_rack)
        a_end: Any = None
        if m.a_transceiver is not None:
            if a_role in SWITCH_ROLES:
                a_end = switch_xcvr[(fabric, m.a_transceiver.id, a_role)]
            else:
                a_end = (fabric, m.a_transceiver.id, a_role.split("/")[1] if "/" in a_role else a_role, a_rack)
        z_end = switch_xcvr[(fabric, m.z_transceiver.id, z_role)] if m.z_transceiver is not None else None
        return cable_key, a_end, z_end

    def _check(self, out: Tally, fabric: str, a_role: str, a_idx: int, z_role: str, z_idx: int, a_rack: int,
               z_rack: int, m: Media, length: float) -> None:
        if m.kind == "unresolved":
            kind = "cage" if m.unfit else "none"
        elif m.copper and m.kind != "cat6" and a_rack != z_rack:
            kind = "copper"
        elif m.reach_m < length:
            kind = "reach"
        else:
            return
        end = "switches" if a_role in SWITCH_ROLES else "servers"
        out.problems.setdefault((fabric, end, kind), (a_role, a_idx, z_role, z_idx, m, length))

    def _racks_of(self, fabric: str, role: str) -> list[int]:
        plan = self.topology.racks
        if role in SWITCH_ROLES:
            return [rack for rack, _ in plan.switches[(fabric, role)]]
        if "/" in role:
            other, tier = role.split("/")
            mgmt = self.topology.fabrics[other].tier(tier)
            per = mgmt.switch.mgmt_ports if mgmt and mgmt.switch.mgmt_ports else 1
            return [rack for rack, _ in plan.switches[(other, tier)] for _ in range(per)]
        if role == "rack-system":
            system = self.topology.resolved.server.rack_system
            per = system.mgmt_ports if system and system.mgmt_ports else 1
            return [rack for rack in plan.gpu_rack_at for _ in range(per)]
        places = plan.appliances.get(role)
        if places:
            return [rack for rack, _ in places]
        return _Constant(plan.central_start)

    def runs(self, fabric: str) -> Iterator[Run]:
        for k, link in enumerate(iter_links(self.topology, fabric)):
            a = self.place(fabric, link.a_role, link.a_index)
            z = self.place(fabric, link.z_role, link.z_index)
            media, length = self.media(fabric, link.a_role, a.rack, z.rack, link.speed_gbps, link.z_role)
            yield Run(link, a, z, media, length, k)

    def all_runs(self) -> Iterator[Run]:
        for fabric in self.topology.fabrics:
            yield from self.runs(fabric)

    def row(self, run: Run) -> tuple[object, ...]:
        link = run.link
        return (link.fabric, *self._end(run.a), link.a_device, link.a_port, *self._end(run.z), link.z_device,
                link.z_port, link.speed_gbps, *self._media_cells(run.media, run.run_m),
                cable_id(link.fabric, link.a_device, link.a_port),
                self._port_name(link.fabric, link.a_role, link.a_port),
                self._port_name(link.fabric, link.z_role, link.z_port))

    def _port_name(self, fabric: str, role: str, port: int | str) -> str:
        """The interface name of a port in its device's own syntax (derive/port_names.py)."""
        key = (fabric, role)
        namer = self._namers.get(key)
        if namer is None:
            namer = self._namers[key] = interface_namer(self.topology, fabric, role)
        return namer(port)

    def rows(self) -> Iterator[tuple[object, ...]]:
        """Every row of the cabling plan, fabric by fabric, in link order (the fast path of `row(run)`:
        places, names and media are worked out once per rack, device and pair of racks)."""
        for fabric in self.topology.fabrics:
            yield from self._rows(fabric)

    def _rows(self, fabric: str) -> Iterator[tuple[object, ...]]:
        from validator.derive.links import device_namer, link_tuples

        namers: dict[str, Any] = {}
        places: dict[tuple[str, int], tuple[object, ...]] = {}
        cells: dict[tuple[str, int, int, float], tuple[object, ...]] = {}

        def end(role: str, index: int) -> tuple[object, ...]:
            key = (role, index)
            found = places.get(key)
            if found is None:
                namer = namers.get(role) or namers.setdefault(role, device_namer(self.topology, fabric, role))
                place = self.place(fabric, role, index)
                found = places[key] = (*self._end(place), namer(index), place.rack)
            return found

        for a_role, a_idx, a_port, z_role, z_idx, z_port, speed in link_tuples(self.topology, fabric):
            a, z = end(a_role, a_idx), end(z_role, z_idx)
            key = (f"{a_role}>{z_role}", int(a[-1]), int(z[-1]), speed)    # type: ignore[call-overload]
            media = cells.get(key)
            if media is None:
                m, length = self.media(fabric, a_role, key[1], key[2], speed, z_role)
                media = cells[key] = self._media_cells(m, length)
            yield (fabric, *a[:-2], a[-2], a_port, *z[:-2], z[-2], z_port, speed, *media,
                   cable_id(fabric, str(a[-2]), a_port),
                   self._port_name(fabric, a_role, a_port), self._port_name(fabric, z_role, z_port))
            if a_role == "server" and len(places) > 4096:
                places.clear()      # servers are visited once each: keep the cache small at 100k GPUs

    def _end(self, place: Place) -> tuple[object, ...]:
        s = self.layout.spot(place.rack)
        return self.site, f"H{s.hall + 1}", f"R{s.row + 1:02d}", self.layout.rack_name(place.rack), place.ru

    @cached_property
    def site(self) -> str:
        design = self.topology.resolved.design
        return design.site.name or design.metadata.name

    @staticmethod
    def _media_cells(m: Media, run_m: float) -> tuple[object, ...]:
        return (m.kind, m.cable.id if m.cable else "UNRESOLVED", m.a_transceiver.id if m.a_transceiver else "",
                m.z_transceiver.id if m.z_transceiver else "", m.length_m, round(run_m, 1))
