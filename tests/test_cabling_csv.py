"""The fast cabling CSV (validator/emit/cabling_csv.py, issue 33) writes exactly what `csv.writer` writes for
`escape.csv_row` of each row of `Plan.rows()`: on a real plan, and for any cell text a design could put in a
site, rack or device name (commas, quotes, line breaks, formula starts, control characters, non-ASCII)."""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES
from validator.derive.cabling import CABLING_COLUMNS, Plan, Walk
from validator.emit import cabling_csv
from validator.emit.escape import csv_row
from validator.pipeline import analyze


def _reference(rows: list[tuple[object, ...]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CABLING_COLUMNS)
    for row in rows:
        writer.writerow(csv_row(row))
    return out.getvalue()


def test_a_real_plan_is_the_standard_writers_text():
    plan = analyze(FIXTURES / "valid" / "small-training.yaml").derived.cabling
    rows = list(plan.rows())
    fast = list(cabling_csv.csv_blocks(plan))
    assert "".join(fast) == _reference(rows)
    assert len(rows) > cabling_csv.BLOCK                  # more than one block, so the split is exercised
    assert all(block.endswith("\n") for block in fast)    # blocks hold whole lines
    assert len(fast) == 1 + -(-len(rows) // cabling_csv.BLOCK)


text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "=1+1", "-3", " @x", "a,b", 'say "hi"', "two\nlines", "R01-09", "\t", "x" * 250, "a" * 199, "+x:y"])
number = st.integers(-5, 10**6) | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([400, 400.0])
cell = text | number | st.none()
port = st.integers(1, 64) | text
roles = ("server", "leaf", "spine")
link = st.tuples(st.sampled_from(roles), st.integers(0, 5), port, st.sampled_from(roles), st.integers(0, 5), port,
                 number, st.integers(0, 3))
fabric = st.tuples(text, st.lists(link, max_size=20))
tables = st.fixed_dictionaries({
    "ends": st.lists(st.tuples(st.integers(1, 48) | text, text, st.integers(0, 4)), min_size=1, max_size=8),
    "racks": st.lists(st.tuples(cell, cell, cell, cell), min_size=1, max_size=5),
    "media": st.lists(st.tuples(text, text, text, text, cell, number), min_size=1, max_size=5),
    "names": st.lists(text, min_size=1, max_size=5)})


class _Fake:
    """A plan of hostile cells: every look-up of `Walk` a function of the drawn tables."""

    def __init__(self, fabrics, t):
        self.fabrics, self.t = fabrics, t

    def end(self, role, index):
        ends = self.t["ends"]
        return ends[(roles.index(role) * 7 + index) % len(ends)]

    def rack(self, rack):
        return self.t["racks"][rack % len(self.t["racks"])]

    def media_cells(self, mid, a_rack, z_rack):
        return self.t["media"][(mid + a_rack + 2 * z_rack) % len(self.t["media"])]

    def port_name(self, role, p):
        return self.t["names"][(roles.index(role) + len(f"{p}")) % len(self.t["names"])]

    def walks(self):
        for name, links in self.fabrics:
            yield name, Walk(iter([lk[:7] for lk in links]), [lk[7] for lk in links], self.end, self.rack,
                             self.media_cells, self.port_name)

    def rows(self):
        """The rows as the docstring of `Walk` defines them, written out here."""
        for name, links in self.fabrics:
            for a_role, a_idx, a_port, z_role, z_idx, z_port, speed, mid in links:
                a, z = self.end(a_role, a_idx), self.end(z_role, z_idx)
                yield (name, *self.rack(a[2]), a[0], a[1], a_port, *self.rack(z[2]), z[0], z[1], z_port, speed,
                       *self.media_cells(mid, a[2], z[2]), f"{name}:{a[1]}:{a_port}",
                       self.port_name(a_role, a_port), self.port_name(z_role, z_port))


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(fabric, min_size=1, max_size=3), tables)
def test_any_cells_are_the_standard_writers_text(fabrics, t):
    """Hostile text in every cell (formula starts, quotes, commas, line breaks, controls) goes through
    `csv_row` and `csv.writer` on the fast path too, and `Plan.rows` gives the rows `Walk` defines."""
    saved, cabling_csv.BLOCK = cabling_csv.BLOCK, 7     # blocks of 7 lines: several blocks in 20 rows
    try:
        fake = _Fake(fabrics, t)
        rows = list(fake.rows())
        assert list(Plan.rows(SimpleNamespace(parts=lambda: Plan.parts(fake)))) == rows  # type: ignore[arg-type]
        counted: list[int] = []
        assert "".join(cabling_csv.csv_blocks(fake, counted.append)) == _reference(rows)  # type: ignore[arg-type]
        assert sum(counted) == len(rows)
    finally:
        cabling_csv.BLOCK = saved


def test_a_filter_keeps_one_line_per_selected_row():
    plan = analyze(FIXTURES / "valid" / "small-training.yaml").derived.cabling
    rows = [row for row in plan.rows() if row[0] == "compute"]
    assert 0 < len(rows) < plan.tally.links
    kept = list(cabling_csv.cabling_csv(plan, lambda row: row[0] == "compute"))
    assert "".join(kept) == _reference(rows) and len(kept) == len(rows) + 1
