"""Choose the cable and transceivers of each link from the catalog, by speed, length and the cages at
both ends.

In one rack: passive copper (DAC) when it reaches, else active copper (ACC). Between racks never
copper: an active optical cable where the catalog has one at that speed, else fiber with a
transceiver at each end, the shortest-reach (cheapest) optics that reach: multimode SR to 50 m,
single-mode DR to 100/500 m, FR to 2 km. 1G runs on Cat6.

Every module and cable plug must fit the cage it goes in (validator/data/cages.yaml): the form factor
family, and for OSFP the top (finned modules and plugs in air-cooled switch cages, flat ones in adapter
and liquid-cooled cages; a splitter cable has its own top at the split ends). A module serves the lanes
of its cage: a twin-port cage takes a twin-port module, a single-port cage a single-port one.
A link for which no catalog part fits is left unresolved and says why (the cage rule NET011 and the
reach rule NET005 report it): a wrong module in a BOM is worse than none.
A part carries the link protocols its `protocols` lists (NVIDIA's NDR/400GbE twin-port parts both, the XDR
1.6T parts InfiniBand only): a link takes only parts that carry its fabric's protocol, and a link left without
media for want of one says so ("infiniband modules only, no ethernet one").
A fabric's `media` setting can force a kind; the reach rule then checks it. `floor` raises the kind (the
cage plan uses it so that every lane of a cage gets the same kind of module: `validator.derive.cabling`).
"""

from __future__ import annotations

import bisect
from functools import cache, cached_property

from validator.base.facts import fact
from validator.base.tables import cage_fits
from validator.resolve.catalog import Catalog
from validator.resolve.catalog.entries import Cable, Transceiver

Cage = tuple[str, str | None]      # (form factor, top) of a cage; ("", None) when unknown
ANY_CAGE: Cage = ("", None)
KINDS = ("dac", "acc", "aoc", "mmf", "smf", "smf-duplex")     # in order of reach; `floor` indexes this
CABLE_KINDS = ("dac", "acc", "aoc", "cat6")                  # a cable with its own plugs, no transceiver
# How a link's two cages are used: (lanes used in the A cage, in the Z cage, all A lanes go to this Z cage,
# all Z lanes go to this A cage). A cable with its own plugs must serve every lane of the cages it plugs into.
Shape = tuple[int, int, bool, bool]


def serves(cable: Cable, shape: Shape) -> bool:
    """Whether one cable of this kind serves the link's lanes with one plug per cage: a straight cable joins
    two cages whose lanes all go to each other (up to its links); a splitter's single plug takes the Z cage's
    lanes (up to its links), each split plug one single-lane A cage."""
    a_used, z_used, a_one_peer, z_one_peer = shape
    if cable.split:
        return a_used == 1 and z_used <= cable.links_per_cable
    return a_one_peer and z_one_peer and max(a_used, z_used) <= cable.links_per_cable


@cache
def _fits() -> dict[str, frozenset[str]]:
    return {plug: fit.cages for plug, fit in cage_fits().items()}


def carries(part: Cable | Transceiver, protocol: str | None) -> bool:
    """Whether a part carries a link protocol. A part that does not state its protocols: no objection."""
    return protocol is None or part.protocols is None or protocol in part.protocols


def fits(form_factor: str | None, top: str | None, cage: Cage) -> bool:
    """Whether a plug of `form_factor` (and `top`) goes in `cage`. Unknown either side: no objection."""
    form, cage_top = cage
    if not form or not form_factor:
        return True
    if form not in _fits().get(form_factor, frozenset({form_factor})):
        return False
    return top is None or cage_top is None or top == cage_top


@fact
class Media:
    cable: Cable | None
    length_m: float               # the length class bought (catalog length at or above the run)
    a_transceiver: Transceiver | None
    z_transceiver: Transceiver | None
    kind: str                     # dac, acc, aoc, mmf, smf, smf-duplex, cat6, or unresolved
    reach_m: float
    unfit: str = ""               # unresolved because no part fits a cage: which cage

    @property
    def copper(self) -> bool:
        return self.kind in ("dac", "acc", "cat6")


class MediaChooser:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._cache: dict[tuple[object, ...], Media] = {}

    @cached_property
    def _cables(self) -> list[Cable]:
        return sorted(self.catalog.entries["cable"].values(), key=lambda c: (c.reach_m, c.id))

    @cached_property
    def _transceivers(self) -> list[Transceiver]:
        return sorted(self.catalog.entries["transceiver"].values(), key=lambda t: (t.reach_m, t.id))

    def _cable(self, kind: str, speed: float, length: float, cages: tuple[Cage, Cage], shape: Shape | None = None,
               protocol: str | None = None) -> Cable | None:
        """The shortest-reach cable of a kind whose plugs fit both cages (the A end is the lower device; a
        splitter's single plug goes in the Z cage, its split plugs in the A cages) and the lanes in them."""
        for c in self._cables_of.get(kind, ()):
            # fiber carries any speed; copper and active cables are built for one, with plugs that must fit
            fits_speed = c.type == "fiber" or c.speed_gbps == speed
            plugs = c.type == "fiber" or (fits(c.form_factor, c.split_top or c.top, cages[0])
                                          and fits(c.form_factor, c.top, cages[1]))
            if fits_speed and c.reach_m >= length and plugs \
                    and (c.type == "fiber" or shape is None or serves(c, shape)) and carries(c, protocol):
                return c
        return None

    @cached_property
    def _cables_of(self) -> dict[str, list[Cable]]:
        """The cables of each kind (type or media), in `_cables` order: a choice scans only its kind's."""
        out: dict[str, list[Cable]] = {}
        for c in self._cables:
            for kind in dict.fromkeys((c.type, c.media or c.type)):
                out.setdefault(kind, []).append(c)
        return out

    @cached_property
    def _xcvrs_of(self) -> dict[tuple[str, float], list[Transceiver]]:
        """The transceivers of each (media, speed), in `_transceivers` order."""
        out: dict[tuple[str, float], list[Transceiver]] = {}
        for t in self._transceivers:
            out.setdefault((t.media, t.speed_gbps), []).append(t)
        return out

    def _xcvrs(self, media: str, speed: float, end: str, lanes: int, cage: Cage, length: float,
               protocol: str | None = None) -> list[Transceiver]:
        """The modules of a media that fit the cage and serve its lanes (one module per cage: a twin-port cage
        takes a twin-port module; a module with fewer ports than the cage's lanes never), best first: those
        with exactly the cage's lanes, then by reach (the shortest that reaches is the cheapest)."""
        options = [t for t in self._xcvrs_of.get((media, speed), ()) if t.reach_m >= length
                   and (t.end == end or t.end == "any") and fits(t.form_factor, t.top, cage) and t.ports >= lanes
                   and carries(t, protocol)]
        return [t for t in options if t.ports == lanes] + [t for t in options if t.ports != lanes]

    def _pair(self, media: str, speed: float, ends: tuple[str, str], lanes: tuple[int, int],
              cages: tuple[Cage, Cage], length: float, protocol: str | None = None
              ) -> tuple[Transceiver, Transceiver] | None:
        """The best module at each end that links to the other: the same lane rate where both are known."""
        zs = self._xcvrs(media, speed, ends[1], lanes[1], cages[1], length, protocol)
        for a in self._xcvrs(media, speed, ends[0], lanes[0], cages[0], length, protocol):
            for z in zs:
                if a.lane_gbps is None or z.lane_gbps is None or a.lane_gbps == z.lane_gbps:
                    return a, z
        return None

    def choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, a_lanes: int,
               a_cage: Cage, z_cage: Cage, forced: str | None, z_lanes: int = 1, floor: int = 0,
               need: float | None = None, shape: Shape | None = None, protocol: str | None = None) -> Media:
        """Media of a link of `length` m; `need` (>= length) is the reach its modules must have (the longest
        lane sharing their cages), `floor` the least kind (an index into KINDS), `protocol` the link's
        (infiniband or ethernet; None: any part)."""
        key = (speed, length, same_rack, a_is_node, a_lanes, a_cage, z_cage, forced, z_lanes, floor, need, shape,
               protocol)
        found = self._cache.get(key)
        if found is None:
            args = (speed, length, same_rack, a_is_node, a_lanes, a_cage, z_cage, forced, z_lanes, floor, need, shape)
            found = self._choose(*args, protocol)
            if found.kind == "unresolved" and protocol is not None:
                found = _protocol_gap(found, self._choose(*args, None), protocol, a_cage, z_cage)
            self._cache[key] = found
        return found

    def _choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, a_lanes: int,
                a_cage: Cage, z_cage: Cage, forced: str | None, z_lanes: int, floor: int, need: float | None,
                shape: Shape | None, protocol: str | None) -> Media:
        if speed <= 1:
            order = ["cat6"]
        elif forced and forced != "auto":
            order = [forced]
        elif same_rack:
            order = [k for k in KINDS if KINDS.index(k) >= floor]
        else:
            order = [k for k in KINDS[2:] if KINDS.index(k) >= floor]
        reach = 0 if forced and forced != "auto" else max(length, need or 0.0)
        for kind in order:
            if kind in CABLE_KINDS:
                cable = self._cable(kind, speed, reach, (a_cage, z_cage), shape, protocol)
                if cable is not None:
                    return Media(cable, _length_class(cable, length), None, None, kind, cable.reach_m)
                continue
            pair = self._pair(kind, speed, ("node" if a_is_node else "switch", "switch"), (a_lanes, z_lanes),
                              (a_cage, z_cage), reach, protocol)
            fiber = self._cable(kind, speed, reach, (a_cage, z_cage), protocol=protocol)
            if pair is None or fiber is None:
                continue
            a, z = pair
            return Media(fiber, _length_class(fiber, length), a, z, kind, min(a.reach_m, z.reach_m, fiber.reach_m))
        return Media(None, length, None, None, "unresolved", 0.0, self._unfit(order, speed, reach, a_is_node, a_cage,
                                                                              z_cage, (a_lanes, z_lanes)))

    def _unfit(self, order: list[str], speed: float, length: float, a_is_node: bool, a_cage: Cage,
               z_cage: Cage, lanes: tuple[int, int]) -> str:
        """The cage that stopped every option, when one did (empty when reach or speed did)."""
        cables = [c for c in self._cables if (c.type in order or (c.media or c.type) in order) and c.type != "fiber"
                  and c.speed_gbps == speed and c.reach_m >= length]
        if cables and not any(fits(c.form_factor, c.split_top or c.top, a_cage)
                              and fits(c.form_factor, c.top, z_cage) for c in cables) \
                and not [k for k in order if k not in CABLE_KINDS]:
            cage = a_cage if a_cage[0] else z_cage      # a cable of the kind reaches but its plugs fit no cage
            return f"{cage[0]}{' ' + cage[1] + '-top' if cage[1] else ''}"
        fitting: list[set[float | None]] = []
        for cage, end, n in ((a_cage, "node" if a_is_node else "switch", lanes[0]), (z_cage, "switch", lanes[1])):
            any_part = [t for t in self._transceivers if t.media in order and t.speed_gbps == speed
                        and t.reach_m >= length and (t.end == end or t.end == "any")]
            fit = [t for t in any_part if fits(t.form_factor, t.top, cage) and t.ports >= n]
            if cage[0] and any_part and not fit:
                what = f"{n}-lane " if n > 1 else ""
                return f"{what}{cage[0]}{' ' + cage[1] + '-top' if cage[1] else ''}"
            fitting.append({t.lane_gbps for t in fit})
        a_rates, z_rates = fitting
        if a_rates and z_rates and None not in a_rates | z_rates and not a_rates & z_rates:
            rates = "/".join(f"{r:g}G" for r in sorted(r for r in a_rates if r is not None))
            return f"{a_cage[0]}{' ' + a_cage[1] + '-top' if a_cage[1] else ''} ({rates} lanes, not the other end's)"
        return ""


def _cage_name(cage: Cage) -> str:
    return f"{cage[0]}{' ' + cage[1] + '-top' if cage[1] else ''}"


def _protocol_gap(unresolved: Media, any_protocol: Media, protocol: str, a_cage: Cage, z_cage: Cage) -> Media:
    """A link left without media that parts of another protocol would have served: say which cage and why
    (NET011: "OSFP224 flat-top (infiniband modules only, no ethernet one)"); else the link as it was."""
    if any_protocol.kind == "unresolved":
        return unresolved
    ends = ((any_protocol.a_transceiver, a_cage, "modules"), (any_protocol.z_transceiver, z_cage, "modules"),
            (any_protocol.cable, a_cage if a_cage[0] else z_cage, "cables"))
    for part, cage, what in ends:
        if part is not None and part.protocols and protocol not in part.protocols:
            only = "/".join(part.protocols)
            name = _cage_name(cage) or "link's"
            return Media(None, unresolved.length_m, None, None, "unresolved", 0.0,
                         f"{name} ({only} {what} only, no {protocol} one)")
    return unresolved


def _length_class(cable: Cable, length: float) -> float:
    lengths = sorted(cable.lengths_m)
    i = bisect.bisect_left(lengths, length - 1e-9)
    return lengths[i] if i < len(lengths) else lengths[-1]
