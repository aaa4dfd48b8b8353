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
from validator.derive.cabling import CABLING_COLUMNS
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
    ["", "=1+1", "-3", " @x", "a,b", 'say "hi"', "two\nlines", "R01-09", "\t", "x" * 250])
number = st.integers(-5, 10**6) | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([400, 400.0])
cell = text | number | st.none()
end = st.tuples(text, text, text, text, st.integers(1, 48), text, st.integers(0, 9))
media = st.tuples(text, text, text, text, cell, number)


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(text, end, st.integers(1, 64) | text, end, st.integers(1, 64) | text, number, media,
                          text, text, text), max_size=20))
def test_any_cells_are_the_standard_writers_text(parts):
    saved, cabling_csv.BLOCK = cabling_csv.BLOCK, 7     # blocks of 7 lines: several blocks in 20 rows
    try:
        _check(parts)
    finally:
        cabling_csv.BLOCK = saved


def _check(parts):
    rows = [(f, *a[:-1], ap, *z[:-1], zp, speed, *m, cable, ai, zi)
            for f, a, ap, z, zp, speed, m, cable, ai, zi in parts]
    counted: list[int] = []
    fake = SimpleNamespace(parts=lambda: iter(parts))
    assert "".join(cabling_csv.csv_blocks(fake, counted.append)) == _reference(rows)   # type: ignore[arg-type]
    assert sum(counted) == len(rows)


def test_a_filter_keeps_one_line_per_selected_row():
    plan = analyze(FIXTURES / "valid" / "small-training.yaml").derived.cabling
    rows = [row for row in plan.rows() if row[0] == "compute"]
    assert 0 < len(rows) < plan.tally.links
    kept = list(cabling_csv.cabling_csv(plan, lambda row: row[0] == "compute"))
    assert "".join(kept) == _reference(rows) and len(kept) == len(rows) + 1
