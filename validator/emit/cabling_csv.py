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

from validator.derive.cabling import CABLING_COLUMNS, Plan, Walk
from validator.emit.escape import csv_row
from validator.emit.progress import stage

BLOCK = 512          # lines per string yielded (one write and one progress step each)

# A cell that csv_row leaves as it is and csv.writer does not quote: it starts with a letter or digit (no
# formula), has no control character, comma, quote or line break, and is far shorter than a spreadsheet cell
_PLAIN = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.:/@+\-]{0,199}")
_PORT = re.compile(r"[0-9A-Za-z_.:/@+\-]{0,200}")    # after a _PLAIN prefix: the whole stays plain


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
    cells: dict[tuple[type, object], str] = {}

    def one(value: object) -> str:
        key = (type(value), value)    # 400 and 400.0 are equal keys but different cells
        found = cells.get(key)
        if found is None:
            found = cells[key] = w.text((value,))
        return found

    for fabric, walk in plan.walks():
        for block, lines in _fabric_blocks(fabric, walk, w.text, one):
            yield block
            if count is not None:
                count(lines)


def _escaped_ends(fabric: str, walk: Walk, text: Callable[[Iterable[object]], str], one: Callable[[object], str]
                  ) -> tuple[Callable[[str, int], tuple[str, int, str, bool]],
                             Callable[[str, int | str], tuple[str, str, str, bool]]]:
    """`end(role, index)`: a device's escaped cells (site to device), its rack, its cable id prefix
    `fabric:device:` and whether that prefix is `_PLAIN`; `port(role, port)`: the escaped port and interface
    cells, the port as text and whether it is `_PORT`. Each rack's cells are escaped once."""
    racks: dict[int, str] = {}
    plain = _PLAIN.fullmatch

    def end(role: str, index: int) -> tuple[str, int, str, bool]:
        ru, device, rack = walk.end(role, index)
        at = racks.get(rack)
        if at is None:
            at = racks[rack] = text(walk.rack(rack))
        prefix = f"{fabric}:{device}:"
        return (f"{at},{ru if type(ru) is int else text((ru,))},"
                f"{device if type(device) is str and plain(device) else text((device,))}",
                rack, prefix, plain(prefix) is not None)

    def port(role: str, p: int | str) -> tuple[str, str, str, bool]:
        raw = f"{p}"
        return (str(p) if type(p) is int else one(p)), one(walk.port_name(role, p)), raw, \
            _PORT.fullmatch(raw) is not None

    return end, port


def _fabric_blocks(fabric: str, walk: Walk, text: Callable[[Iterable[object]], str],
                   one: Callable[[object], str]) -> Iterator[tuple[str, int]]:
    """A fabric's rows as CSV, `BLOCK` lines a string (with its count of lines), one Python step per link:
    each rack's cells, each device's end, each (media, A rack, Z rack) and each (role, port) is escaped once, by
    `text`, and a line is their texts put together. The cable id (`fabric:device:port`) is written as it is
    where `fabric:device:` is `_PLAIN` and the port `_PORT` (then so is the whole: csv_row and the writer leave
    it as it is), and escaped by `text` otherwise."""
    ends: dict[tuple[str, int], tuple[str, int, str, bool]] = {}
    ports: dict[tuple[str, int | str], tuple[str, str, str, bool]] = {}
    medias: dict[tuple[int, int, int], str] = {}
    end, port = _escaped_ends(fabric, walk, text, one)
    fab = one(fabric)

    last_role, last_index = "", -1
    a_text, a_rack, a_prefix, a_plain = "", 0, "", False
    last_speed: object = None
    speed_text = ""
    lines: list[str] = []
    append = lines.append
    for (a_role, a_idx, a_port, z_role, z_idx, z_port, speed), mid in zip(walk.links, walk.mids, strict=True):
        if a_idx != last_index or a_role != last_role:     # a server's links come one after another
            last_role, last_index = a_role, a_idx
            found = ends.get((a_role, a_idx))
            if found is None:
                found = end(a_role, a_idx)
                if a_role != "server":          # servers are visited once each: not kept
                    ends[(a_role, a_idx)] = found
            a_text, a_rack, a_prefix, a_plain = found
        z = ends.get((z_role, z_idx))
        if z is None:
            z = ends[(z_role, z_idx)] = end(z_role, z_idx)
        pa = ports.get((a_role, a_port))
        if pa is None:
            pa = ports[(a_role, a_port)] = port(a_role, a_port)
        pz = ports.get((z_role, z_port))
        if pz is None:
            pz = ports[(z_role, z_port)] = port(z_role, z_port)
        m = medias.get((mid, a_rack, z[1]))
        if m is None:
            m = medias[(mid, a_rack, z[1])] = text(walk.media_cells(mid, a_rack, z[1]))
        if speed is not last_speed:
            last_speed, speed_text = speed, one(speed)
        cable = a_prefix + pa[2]
        append(f"{fab},{a_text},{pa[0]},{z[0]},{pz[0]},{speed_text},{m},"
               f"{cable if a_plain and pa[3] else text((cable,))},{pa[1]},{pz[1]}\n")
        if len(lines) == BLOCK:
            yield "".join(lines), BLOCK
            lines.clear()
    if lines:
        yield "".join(lines), len(lines)


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
