"""Choose the cable and transceivers of each link from the catalog, by speed, ends and length.

In one rack: passive copper (DAC) when it reaches, else active copper (ACC). Between racks never
copper: an active optical cable where the catalog has one at that speed, else fiber with a
transceiver at each end, the shortest-reach (cheapest) optics that reach: multimode SR to 50 m,
single-mode DR to 100/500 m, FR to 2 km. A fabric's `media` setting can force a choice; the
optics-reach rule then checks it. 1G runs on Cat6.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property

from validator.resolve.catalog import Catalog
from validator.resolve.catalog.entries import Cable, Transceiver


@dataclass(frozen=True)
class Media:
    cable: Cable | None
    length_m: float               # the length class bought (catalog length at or above the run)
    a_transceiver: Transceiver | None
    z_transceiver: Transceiver | None
    kind: str                     # dac, acc, aoc, mmf, smf, smf-duplex, cat6, or unresolved
    reach_m: float

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

    def _cable(self, kind: str, speed: float, length: float) -> Cable | None:
        for c in self._cables:
            media = c.media or c.type
            # fiber carries any speed; copper and active cables are built for one
            fits_speed = c.type == "fiber" or c.speed_gbps == speed
            if (c.type == kind or media == kind) and fits_speed and c.reach_m >= length:
                return c
        return None

    def _xcvr(self, media: str, speed: float, end: str, twin: bool, form: str | None, length: float
              ) -> Transceiver | None:
        options = [t for t in self._transceivers if t.media == media and t.speed_gbps == speed and t.reach_m >= length
                   and (t.end == end or t.end == "any")]
        if form:
            options = [t for t in options if t.form_factor == form] or options
        preferred = [t for t in options if (t.ports == 2) == twin]
        best = preferred or options
        return best[0] if best else None

    def choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, node_twin: bool,
               node_form: str | None, forced: str | None) -> Media:
        key = (speed, length, same_rack, a_is_node, node_twin, node_form, forced)
        if key not in self._cache:
            self._cache[key] = self._choose(speed, length, same_rack, a_is_node, node_twin, node_form, forced)
        return self._cache[key]

    def _choose(self, speed: float, length: float, same_rack: bool, a_is_node: bool, node_twin: bool,
                node_form: str | None, forced: str | None) -> Media:
        if speed <= 1:
            order = ["cat6"]
        elif forced and forced != "auto":
            order = [forced]
        elif same_rack:
            order = ["dac", "acc", "aoc", "mmf", "smf", "smf-duplex"]
        else:
            order = ["aoc", "mmf", "smf", "smf-duplex"]
        for kind in order:
            if kind in ("dac", "acc", "aoc", "cat6"):
                cable = self._cable(kind, speed, length) if not forced or forced == "auto" else \
                    self._cable(kind, speed, 0)
                if cable is None:
                    continue
                return Media(cable, _length_class(cable, length), None, None, kind, cable.reach_m)
            a = self._xcvr(kind, speed, "node" if a_is_node else "switch", node_twin if a_is_node else True,
                           node_form if a_is_node else None, 0 if forced else length)
            z = self._xcvr(kind, speed, "switch", True, None, 0 if forced else length)
            fiber = self._cable(kind, speed, 0 if forced else length)
            if a is None or z is None or fiber is None:
                continue
            return Media(fiber, _length_class(fiber, length), a, z, kind, min(a.reach_m, z.reach_m, fiber.reach_m))
        return Media(None, length, None, None, "unresolved", 0.0)


def _length_class(cable: Cable, length: float) -> float:
    lengths = sorted(cable.lengths_m)
    i = bisect.bisect_left(lengths, length - 1e-9)
    return lengths[i] if i < len(lengths) else lengths[-1]
