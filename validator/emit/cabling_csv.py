"""The cabling plan as CSV text, fast: the same bytes as `csv.writer` writing `escape.csv_row` of every row of
`Plan.rows()` (tests/test_cabling_csv.py), for the half a million rows of a 100k-GPU plan.

A row's cells repeat in groups: a device's end (site, hall, row, rack, ru, name) on each of its ports, the media
cells of a pair of racks, an interface name on every device of a tier. Each group is escaped once, by the same
`csv_row` and `csv.writer` (a minimal-quoting writer quotes a cell on its own content only, so a row is its
cells' texts joined by commas), and the lines are joined into blocks of `BLOCK` lines."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator

from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.escape import csv_row
from validator.emit.progress import stage

BLOCK = 512          # lines per string yielded (one write and one progress step each)
_CACHE_LIMIT = 8192  # end groups remembered (a server's end is seen once or twice: the cache starts over)

# A cell that csv_row leaves as it is and csv.writer does not quote: it starts with a letter or digit (no
# formula), has no control character, comma, quote or line break, and is far shorter than a spreadsheet cell
_PLAIN = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.:/@+\-]{0,199}")


class _Writer:
    """Cells to CSV text with the standard writer (one cell or a group of cells, without the line end)."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer, lineterminator="\n")

    def text(self, cells: Iterable[object]) -> str:
        row = csv_row(cells)
        if row == [""]:
            return ""                  # an empty cell among others is written empty (alone, the writer quotes it)
        self.buffer.seek(0)
        self.buffer.truncate()
        self.writer.writerow(row)
        return self.buffer.getvalue()[:-1]


def header() -> str:
    return _Writer().text(CABLING_COLUMNS) + "\n"


def csv_blocks(plan: Plan, count: Callable[[int], None] | None = None) -> Iterator[str]:
    """The header line, then every row of the plan as CSV, `BLOCK` lines a string; `count(n)` after each block."""
    yield header()
    w = _Writer()
    ends: dict[int, tuple[tuple[object, ...], str]] = {}
    media_text: dict[int, tuple[tuple[object, ...], str]] = {}
    cells: dict[tuple[type, object], str] = {}

    def one(value: object) -> str:
        key = (type(value), value)    # 400 and 400.0 are equal keys but different cells
        found = cells.get(key)
        if found is None:
            found = cells[key] = w.text((value,))
        return found

    def group(cache: dict[int, tuple[tuple[object, ...], str]], part: tuple[object, ...], cut: int) -> str:
        found = cache.get(id(part))
        if found is None or found[0] is not part:
            if len(cache) > _CACHE_LIMIT:
                cache.clear()
            found = cache[id(part)] = (part, w.text(part[:cut]))   # the tuple is kept: its id is not reused
        return found[1]

    block: list[str] = []
    plain = _PLAIN.fullmatch
    for fabric, a, a_port, z, z_port, speed, media, cable, a_name, z_name in plan.parts():
        block.append(",".join((one(fabric), group(ends, a, -1), str(a_port) if type(a_port) is int else one(a_port),
                               group(ends, z, -1), str(z_port) if type(z_port) is int else one(z_port),
                               one(speed), group(media_text, media, len(media)),
                               cable if plain(cable) else w.text((cable,)), one(a_name), one(z_name))) + "\n")
        if len(block) == BLOCK:
            yield "".join(block)
            if count is not None:
                count(BLOCK)
            block = []
    if block:
        yield "".join(block)
        if count is not None:
            count(len(block))


def cabling_csv(plan: Plan, keep: Callable[[tuple[object, ...]], bool] | None = None,
                label: str = "cabling") -> Iterator[str]:
    """The cabling plan as CSV, as a counted progress stage; with `keep` (emit/tables.py cabling_filter) only the
    rows it selects, one line a string."""
    with stage(label, plan.tally.links) as current:
        if keep is None:
            def advance(n: int) -> None:
                current.done += n
            yield from csv_blocks(plan, advance)
            return
        yield header()
        w = _Writer()
        for row in plan.rows():
            current.done += 1
            if keep(row):
                yield w.text(row) + "\n"
