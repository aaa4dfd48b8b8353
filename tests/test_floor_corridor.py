"""Runs between halls along the corridor (issue 25): halls on one side of it, or facing each other in pairs
(`site.layout.hall_sides: 2`). Expected lengths are hand arithmetic over the layout's own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import DESIGNS
from validator.derive.placement import Layout
from validator.pipeline import load_topology


def layout_of(tmp_path: Path, sides: int) -> Layout:
    # halls of one row of 4 racks, 100 m between hall entrances
    text = (DESIGNS / "roce-h100-2tier.yaml").read_text().replace(
        "layout: {racks_per_row: 12}",
        f"layout: {{racks_per_row: 4, rows_per_hall: 1, hall_spacing_m: 100, hall_sides: {sides}}}")
    path = tmp_path / f"sides-{sides}.yaml"
    path.write_text(text)
    return Layout(load_topology(path, path.name))


@pytest.mark.parametrize(("sides", "corridor"), [
    # one side: hall k is k spacings from hall 0
    (1, {(0, 1): 1, (0, 2): 2, (0, 3): 3, (1, 2): 1, (2, 5): 3}),
    # two sides: halls 2k and 2k + 1 face each other (pair k): |dpair| along the corridor + 1 across it
    (2, {(0, 1): 1, (0, 2): 1, (0, 3): 2, (1, 2): 2, (2, 5): 2}),
])
def test_runs_between_halls_follow_the_corridor(tmp_path: Path, sides: int, corridor: dict[tuple[int, int], int]
                                                ) -> None:
    layout = layout_of(tmp_path, sides)
    assert layout.halls >= 6
    first = {}
    for rack in range(layout.rack_count):
        first.setdefault(layout.spot(rack).hall, rack)
    last = {layout.spot(rack).hall: rack for rack in range(layout.rack_count)}
    for (a, b), spacings in corridor.items():
        assert layout.corridor(a, b) == spacings
        # the last rack of hall a (position 3 of its row: 3 x 0.6 m to the entrance) to the first of hall b
        # (at its entrance): 1.8 + spacings x 100 + 0 + 2 x (1.5 + 0.5) m (validator/data/layout.yaml)
        ra, rb = last[a], first[b]
        assert layout.spot(ra).position == 3 and layout.spot(rb).position == 0
        assert layout.distance_m(ra, rb) == pytest.approx(3 * 0.6 + spacings * 100 + 4)
