"""Where each rack stands and how long a cable between two racks is (the derive stage).

The rack plan (`validator.expand.racks`) lays racks out in rows of `racks_per_row` and halls of
`rows_per_hall` (validator/data/layout.yaml, or `site.layout`): compute groups follow each other along
the rows, a group that fits a row (or a hall) kept in one; this module turns those spots into cable
lengths.
A run between two racks of one hall goes along the rows and across them and climbs to the overhead
tray and back down; between halls it goes to the hall entrance (row 1, position 1), along the
corridor `hall_spacing_m` per hall between them, and on. With `hall_sides: 2` the halls face each other
in pairs across the corridor (halls 2k and 2k + 1): the run passes `hall_spacing_m` per pair along it and
one more across it when the halls are on different sides.

    in one rack:  in_rack_m
    one hall:     |dx| x rack_width + |drow| x row_pitch + 2 x (vertical_per_end + slack_per_end)
    two halls:    d(a, entrance) + corridor x hall_spacing + d(entrance, b) + 2 x (vertical + slack)
    corridor:     |dhall| (one side); |dpair| + (1 if the sides differ) (two sides)
"""

from __future__ import annotations

from validator.base.facts import fact
from validator.expand.topology import Topology


@fact
class Place:
    rack: int          # floor index
    ru: int            # lowest rack unit occupied (1-based)


@fact
class Spot:
    hall: int
    row: int
    position: int


class Layout:
    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.plan = topology.racks
        values = topology.resolved.layout
        self.racks_per_row = max(1, int(values["racks_per_row"]))
        self.rows_per_hall = max(1, int(values["rows_per_hall"]))
        self.rack_width = values["rack_width_m"]
        self.row_pitch = values["row_pitch_m"]
        self.hall_spacing = values["hall_spacing_m"]
        self.ends = 2 * (values["vertical_per_end_m"] + values["slack_per_end_m"])
        self.in_rack = values["in_rack_m"]
        self.sides = int(values["hall_sides"])     # 1 or 2 (the design schema allows no other)
        self.halls = max((s[0] for s in self.plan.spots), default=0) + 1
        self._distances: dict[tuple[int, int], float] = {}

    @property
    def rack_count(self) -> int:
        return len(self.plan.racks)

    def spot(self, rack: int) -> Spot:
        if rack < len(self.plan.spots):
            return Spot(*self.plan.spots[rack])
        row, position = divmod(rack, self.racks_per_row)
        hall, row = divmod(row, self.rows_per_hall)
        return Spot(hall, row, position)

    def server(self, s: int) -> Place:
        return Place(*self.plan.server(s))

    def switch(self, fabric: str, role: str, index: int) -> Place:
        return Place(*self.plan.switch(fabric, role, index))

    def appliance(self, role: str, index: int) -> Place:
        return Place(*self.plan.appliance(role, index))

    def rack_name(self, rack: int) -> str:
        s = self.spot(rack)
        name = f"R{s.row + 1:02d}-{s.position + 1:02d}"
        return f"H{s.hall + 1}-{name}" if self.halls > 1 else name

    def distance_m(self, a: int, b: int) -> float:
        if a == b:
            return self.in_rack
        key = (a, b) if a < b else (b, a)
        found = self._distances.get(key)
        if found is None:
            found = self._distances[key] = self._distance(a, b)
        return found

    def _distance(self, a: int, b: int) -> float:
        """Along the rows and across them between two spots of a hall (or from each to its hall's entrance, row 0
        position 0), on plain numbers: a cage plan asks for some hundred thousand pairs of racks."""
        hall_a, row_a, pos_a = self._where(a)
        hall_b, row_b, pos_b = self._where(b)
        width, pitch = self.rack_width, self.row_pitch
        if hall_a == hall_b:
            return abs(pos_a - pos_b) * width + abs(row_a - row_b) * pitch + self.ends
        return (abs(pos_a) * width + abs(row_a) * pitch + self.corridor(hall_a, hall_b) * self.hall_spacing
                + (abs(pos_b) * width + abs(row_b) * pitch) + self.ends)

    def _where(self, rack: int) -> tuple[int, int, int]:
        """(hall, row, position) of a rack, as `spot` gives them."""
        if rack < len(self.plan.spots):
            hall, row, position = self.plan.spots[rack]
            return hall, row, position
        row, position = divmod(rack, self.racks_per_row)
        hall, row = divmod(row, self.rows_per_hall)
        return hall, row, position

    def corridor(self, a: int, b: int) -> int:
        """Hall spacings between the entrances of halls `a` and `b` (0-based)."""
        if self.sides == 1:
            return abs(a - b)
        (pa, sa), (pb, sb) = divmod(a, 2), divmod(b, 2)
        return abs(pa - pb) + (sa != sb)
