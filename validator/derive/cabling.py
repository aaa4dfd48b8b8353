"""The cabling plan: one row per link, A end to Z end, with racks, media, parts and length class.

Two views of the same links, both reading the cage plan (`validator.derive.tally`: one module or cable plug
per cage, the same kind for every lane of a cage). `rows()` and `runs()` stream every link with names, for the
cabling plan. `tally` counts modules per cage and cables, for the BOM, the rack power and the optics rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import Any, NamedTuple

from validator.base.facts import fact
from validator.base.gc_pause import paused_gc
from validator.derive.cages import CageIndex
from validator.derive.link_arrays import release_freed_arrays
from validator.derive.links import Link, LinkTuple, iter_links
from validator.derive.media import ANY_CAGE, Cage, Media, MediaChooser, Shape
from validator.derive.placement import Layout, Place
from validator.derive.port_names import cable_id, interface_namer
from validator.derive.tally import CagePlan, LinkClass, Tally, build_tally
from validator.expand.topology import SWITCH_ROLES, Topology
from validator.resolve.catalog.entries import Nic

# Above this many servers the cage plan's arrays are large enough (tens of MiB) that returning them to the system
# when freed lowers the peak (validator.derive.link_arrays.release_freed_arrays); a tuning choice, not a fact
LARGE_PLAN_SERVERS = 4096

# A cable run list as data-centre teams ask for it (Arista AVD #7075, NetBox cables): both ends with site,
# hall, row, rack and rack unit, the media part numbers, the length class bought and the run it covers.
CABLING_COLUMNS = ("fabric", "a_site", "a_hall", "a_row", "a_rack", "a_ru", "a_device", "a_port",
                   "z_site", "z_hall", "z_row", "z_rack", "z_ru", "z_device", "z_port", "speed_gbps", "media",
                   "cable", "a_transceiver", "z_transceiver", "length_class_m", "run_m",
                   "cable_id", "a_interface", "z_interface")
# One link as Plan.parts yields it: fabric, A end, A port, Z end, Z port, speed, media cells, cable id, interfaces
End = tuple[object, ...]
Part = tuple[str, End, "int | str", End, "int | str", object, tuple[object, ...], str, str, str]
CABLING_WIDTHS = (9, 14, 6, 6, 10, 6, 30, 7, 14, 6, 6, 10, 6, 30, 7, 10, 10, 18, 18, 18, 9, 8, 16, 16, 16)


@fact
class Run:
    link: Link
    a: Place
    z: Place
    media: Media
    run_m: float


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
        self._nic: dict[str, Nic] = {name: catalog.nic(links.nic) for name, links in server.links.items()
                                     if catalog.find("nic", links.nic)}
        self._cages: dict[tuple[str, str, bool], Cage] = {}
        self._namers: dict[tuple[str, str], Callable[[int | str], str]] = {}
        self._rack_lists: dict[tuple[str, str], list[int]] = {}

    @cached_property
    def _server_racks(self) -> list[int]:
        return self.topology.racks.server_racks(self.topology.servers)

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
            return nic.form_factor, nic.top or ("flat" if nic.form_factor.startswith("OSFP") else None)
        if "/" in role or role == "rack-system":
            return "RJ45", None
        tier = self.topology.fabrics[fabric].tier(role) if role in SWITCH_ROLES else None
        if tier is None or not tier.layout.slots:
            return ANY_CAGE
        slot = tier.layout.slots[tier.down_ports] if up and tier.up_ports else tier.layout.slots[0]
        group = tier.switch.port_groups[slot.group]
        return group.form_factor, group.top

    @cached_property
    def cages(self) -> CageIndex:
        """Where every link end plugs in (validator.derive.cages)."""
        forms = {fabric: self.cage(fabric, "server", True) for fabric in self.topology.fabrics}
        return CageIndex(self.topology, forms)

    @cached_property
    def cage_plan(self) -> CagePlan:
        """The links as cage pairs with one media kind and reach per group of joined cages."""
        if self.topology.servers > LARGE_PLAN_SERVERS:
            release_freed_arrays()
        with paused_gc():
            return CagePlan(self)

    @cached_property
    def tally(self) -> Tally:
        """Modules per cage, cables and reach problems over every link (validator.derive.tally)."""
        with paused_gc():
            return build_tally(self)

    def rack_lists(self, fabric: str) -> Callable[[str], list[int]]:
        """The rack of every device of a role on a fabric (a list per role, built once)."""
        racks = self._rack_lists

        def of(role: str) -> list[int]:
            if role == "server":
                return self._server_racks
            found = racks.get((fabric, role))
            if found is None:
                found = racks[(fabric, role)] = self._racks_of(fabric, role)
            return found
        return of

    def choose(self, cls: LinkClass, floor: int, need: float, shape: Shape) -> Media:
        """The media of a link of a class, with its cage group's least kind and reach, from parts that carry the
        fabric's protocol (infiniband for an InfiniBand fabric, else ethernet)."""
        fabric, a_role, _z_role, a_rack, z_rack, speed, a_lanes, z_lanes, a_cage, z_cage = cls
        spec = getattr(self.topology.resolved.design.fabrics, fabric)
        forced = (spec.media.switches if a_role in SWITCH_ROLES else spec.media.servers) if spec.media else None
        node = a_role not in SWITCH_ROLES and "/" not in a_role and a_role != "rack-system"
        protocol = "infiniband" if spec.type == "infiniband" else "ethernet"      # RoCE runs on Ethernet parts
        return self.chooser.choose(speed, self.layout.distance_m(a_rack, z_rack), a_rack == z_rack, node, a_lanes,
                                   a_cage, z_cage, forced, z_lanes, floor, need, shape, protocol)

    def check(self, out: Tally, fabric: str, a_role: str, a_idx: int, z_role: str, z_idx: int, a_rack: int,
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

    def first_link(self, fabric: str) -> int:
        """Index in the cage plan of a fabric's first link (the plan walks fabrics in order)."""
        first = 0
        for name in self.topology.fabrics:
            if name == fabric:
                return first
            first += self.tally.summaries[name].links
        raise KeyError(fabric)

    def runs(self, fabric: str) -> Iterator[Run]:
        cp = self.cage_plan
        for k, link in enumerate(iter_links(self.topology, fabric), start=self.first_link(fabric)):
            a = self.place(fabric, link.a_role, link.a_index)
            z = self.place(fabric, link.z_role, link.z_index)
            yield Run(link, a, z, cp.media(k), self.layout.distance_m(a.rack, z.rack))

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
        for fabric, a, a_port, z, z_port, speed, media, cable, a_name, z_name in self.parts():
            yield (fabric, *a[:-1], a_port, *z[:-1], z_port, speed, *media, cable, a_name, z_name)

    def parts(self) -> Iterator[Part]:
        """Every link of the cabling plan as its parts, in `rows()` order: (fabric, A end, A port, Z end, Z port,
        speed, media cells, cable id, A interface, Z interface). An end is (site, hall, row, rack, ru, device,
        rack index) and the media cells are those of `row`; the same end or media is the same tuple object
        while it repeats (a switch's end on each of its ports), so a writer can format it once."""
        for fabric, walk in self.walks():
            yield from _parts(fabric, walk)

    def walks(self) -> Iterator[tuple[str, Walk]]:
        """Each fabric with its `Walk`: the links as `link_tuples` gives them and what names them."""
        for fabric in self.topology.fabrics:
            yield fabric, self.walk(fabric)

    def walk(self, fabric: str) -> Walk:
        """A fabric's links and the look-ups that turn one into a cabling row (see `Walk`); nothing is cached."""
        from validator.derive.links import device_namer, link_tuples

        namers: dict[str, Any] = {}
        cp = self.cage_plan
        first = self.first_link(fabric)

        def end(role: str, index: int) -> tuple[int, str, int]:
            namer = namers.get(role) or namers.setdefault(role, device_namer(self.topology, fabric, role))
            place = self.place(fabric, role, index)
            return place.ru, namer(index), place.rack

        def media_cells(mid: int, a_rack: int, z_rack: int) -> tuple[object, ...]:
            return self._media_cells(cp.medias[mid], self.layout.distance_m(a_rack, z_rack))

        return Walk(link_tuples(self.topology, fabric), cp.mid[first:first + self.tally.summaries[fabric].links],
                    end, self._rack_cells, media_cells, lambda role, port: self._port_name(fabric, role, port))

    def _end(self, place: Place) -> tuple[object, ...]:
        return (*self._rack_cells(place.rack), place.ru)

    def _rack_cells(self, rack: int) -> tuple[str, str, str, str]:
        s = self.layout.spot(rack)
        return self.site, f"H{s.hall + 1}", f"R{s.row + 1:02d}", self.layout.rack_name(rack)

    @cached_property
    def site(self) -> str:
        design = self.topology.resolved.design
        return design.site.name or design.metadata.name

    @staticmethod
    def _media_cells(m: Media, run_m: float) -> tuple[object, ...]:
        return (m.kind, m.cable.id if m.cable else "UNRESOLVED", m.a_transceiver.id if m.a_transceiver else "",
                m.z_transceiver.id if m.z_transceiver else "", m.length_m, round(run_m, 1))


class Walk(NamedTuple):
    """One fabric's links as the cabling plan reads them: `links` as `link_tuples` yields them (A role, A index,
    A port, Z role, Z index, Z port, speed), `mids` the media of each (an index into the cage plan's medias),
    `end(role, index)` a device's (ru, device name, rack index), `rack(rack index)` its rack's (site, hall, row,
    rack) cells, `media_cells(mid, A rack, Z rack)` the media cells of `Plan.row`, `port_name(role, port)` an
    interface name. A row's cable id is `cable_id(fabric, device of the A end, A port)`."""
    links: Iterator[LinkTuple]
    mids: Sequence[int]
    end: Callable[[str, int], tuple[Any, Any, int]]
    rack: Callable[[int], tuple[Any, ...]]
    media_cells: Callable[[int, int, int], tuple[object, ...]]
    port_name: Callable[[str, int | str], str]


def _parts(fabric: str, walk: Walk) -> Iterator[Part]:
    places: dict[tuple[str, int], End] = {}
    racks: dict[int, tuple[Any, ...]] = {}
    cells: dict[tuple[int, int, int], tuple[object, ...]] = {}
    port_names: dict[tuple[str, int | str], str] = {}

    def end(role: str, index: int) -> End:
        key = (role, index)
        found = places.get(key)
        if found is None:
            ru, device, rack = walk.end(role, index)
            at = racks.get(rack)
            if at is None:
                at = racks[rack] = walk.rack(rack)
            found = places[key] = (*at, ru, device, rack)
        return found

    def port_name(role: str, port: int | str) -> str:
        key = (role, port)
        found = port_names.get(key)
        if found is None:
            found = port_names[key] = walk.port_name(role, port)
        return found

    for (a_role, a_idx, a_port, z_role, z_idx, z_port, speed), mid in zip(walk.links, walk.mids, strict=True):
        a, z = end(a_role, a_idx), end(z_role, z_idx)
        key = (mid, int(a[-1]), int(z[-1]))    # type: ignore[call-overload]
        media = cells.get(key)
        if media is None:
            media = cells[key] = walk.media_cells(*key)
        yield (fabric, a, a_port, z, z_port, speed, media, cable_id(fabric, str(a[-2]), a_port),
               port_name(a_role, a_port), port_name(z_role, z_port))
        if a_role == "server" and len(places) > 4096:
            places.clear()      # servers are visited once each: keep the cache small at 100k GPUs
