"""Choose the cable and transceivers of each link from the catalog, by speed, length and the cages at
both ends.

In one rack: passive copper (DAC) when it reaches, else active copper (ACC). Between racks never
copper: an active optical cable where the catalog has one at that speed, else fiber with a
transceiver at each end, the shortest-reach (cheapest) optics that reach: multimode SR to 50 m,
single-mode DR to 100/500 m, FR to 2 km. 1G runs on Cat6.

Every module and cable plug must fit the cage it goes in (validator/data/cages.yaml): the form factor
family, and for OSFP the top (finned modules in air-cooled switch cages, flat ones in adapter and
liquid-cooled cages). A link for which no catalog part fits is left unresolved and says why (the
cage rule NET011 and the reach rule NET005 report it): a wrong module in a BOM is worse than none.
A fabric's `media` setting can force a kind; the reach rule then checks it.
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


@cache
def _fits() -> dict[str, frozenset[str]]:
    return {plug: fit.cages for plug, fit in cage_fits().items()}


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

    def _cable(self, kind: str, speed: float, length: float, cages: tuple[Cage, Cage]) -> Cable | None:
        for c in self._cables:
            media = c.media or c.type
            # fiber carries any speed; copper and active cables are built for one, with plugs that must fit
            fits_speed = c.type == "fiber" or c.speed_gbps == speed
            plugs = c.type == "fiber" or all(fits(c.form_factor, None, cage) for cage in cages)
            if (c.type == kind or media == kind) and fits_speed and c.reach_m >= length and plugs:
                return c
        return None

    def _xcvr(self, media: str, speed: float, end: str, twin: bool, cage: Cage, length: float
              ) -> Transceiver | None:
        options = [t for t in self._transceivers if t.media == media and t.speed_gbps == speed and t.reach_m >= length
                   and (t.end == end or t.end == "any") and fits(t.form_factor, t.top, cage)]
        preferred = [t for t in options if (t.ports == 2) == twin]
        best = preferred or options
        return best[0] if best else None

    def choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, node_twin: bool,
               a_cage: Cage, z_cage: Cage, forced: str | None) -> Media:
        key = (speed, length, same_rack, a_is_node, node_twin, a_cage, z_cage, forced)
        if key not in self._cache:
            self._cache[key] = self._choose(speed, length, same_rack, a_is_node, node_twin, a_cage, z_cage, forced)
        return self._cache[key]

    def _choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, node_twin: bool,
                a_cage: Cage, z_cage: Cage, forced: str | None) -> Media:
        if speed <= 1:
            order = ["cat6"]
        elif forced and forced != "auto":
            order = [forced]
        elif same_rack:
            order = ["dac", "acc", "aoc", "mmf", "smf", "smf-duplex"]
        else:
            order = ["aoc", "mmf", "smf", "smf-duplex"]
        reach = 0 if forced and forced != "auto" else length
        for kind in order:
            if kind in ("dac", "acc", "aoc", "cat6"):
                cable = self._cable(kind, speed, reach, (a_cage, z_cage))
                if cable is not None:
                    return Media(cable, _length_class(cable, length), None, None, kind, cable.reach_m)
                continue
            a = self._xcvr(kind, speed, "node" if a_is_node else "switch", node_twin if a_is_node else True,
                           a_cage, reach)
            z = self._xcvr(kind, speed, "switch", True, z_cage, reach)
            fiber = self._cable(kind, speed, reach, (a_cage, z_cage))
            if a is None or z is None or fiber is None:
                continue
            return Media(fiber, _length_class(fiber, length), a, z, kind, min(a.reach_m, z.reach_m, fiber.reach_m))
        return Media(None, length, None, None, "unresolved", 0.0, self._unfit(order, speed, reach, a_is_node, a_cage,
                                                                              z_cage))

    def _unfit(self, order: list[str], speed: float, length: float, a_is_node: bool, a_cage: Cage,
               z_cage: Cage) -> str:
        """The cage that stopped every option, when one did (empty when reach or speed did)."""
        for cage, end in ((a_cage, "node" if a_is_node else "switch"), (z_cage, "switch")):
            if not cage[0]:
                continue
            any_part = [t for t in self._transceivers if t.media in order and t.speed_gbps == speed
                        and t.reach_m >= length and (t.end == end or t.end == "any")]
            if any_part and not [t for t in any_part if fits(t.form_factor, t.top, cage)]:
                return f"{cage[0]}{' ' + cage[1] + '-top' if cage[1] else ''}"
        return ""


def _length_class(cable: Cable, length: float) -> float:
    lengths = sorted(cable.lengths_m)
    i = bisect.bisect_left(lengths, length - 1e-9)
    return lengths[i] if i < len(lengths) else lengths[-1]
