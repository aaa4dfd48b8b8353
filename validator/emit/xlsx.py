"""The Excel workbooks: `bom` writes Summary, BOM, Sources, Power & Cooling, Findings; `cabling` writes
Summary and Cabling. Every sheet prints: fit to one page wide (the BOM sheet portrait, at 8 pt or more
on A4 or Letter; the others landscape), the title row repeated on each page, the design name and date
in the header (the design's commit or --timestamp; "undated" rather than a made-up date), page numbers
in the footer, frozen header row, fonts named explicitly; the cabling plan breaks its pages at each rack.
The BOM sheets are in validator/emit/xlsx_bom.py.

Written in openpyxl's write-only mode (the cabling sheet of a 100k-GPU design streams), with real
formulas for extended prices and totals, styled and frozen header rows, autofilters, number formats
and column widths. Byte-identical for the same input: the document timestamp is fixed (the design's
git commit time or a given value) and the zip entries carry that same date.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from validator.base.findings import Finding
from validator.derive.bom import Bom
from validator.derive.cabling import CABLING_COLUMNS, CABLING_WIDTHS, Plan
from validator.emit.escape import EXCEL_MAX, Formula, cell_text, formula_like

HEADER_FILL = "1F4E78"
FONT = "Calibri"          # named on every styled cell (the workbook default font is Calibri 11 too)
MONEY = '[<1000]"$"#,##0.00;"$"#,##0'         # cents where a value is small ($1.55, not $2)
KW = "#,##0.0"


def _print_setup(ws: Any, title: str, stamp: str, orientation: str = "landscape") -> None:
    """One page wide, row 1 repeated on every page, design and date in the header."""
    ws.page_setup.orientation = orientation
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.print_options.gridLines = True
    for part, text in ((ws.oddHeader.left, title.replace("&", "&&")), (ws.oddHeader.center, "&A"),
                       (ws.oddHeader.right, stamp), (ws.oddFooter.center, "Page &P of &N")):
        part.text = text
        part.font = FONT
        part.size = 11            # as the cells: the BOM sheet's 8 pt minimum holds for the header too


def _header(ws: Any, names: Sequence[str], widths: Sequence[float], orientation: str = "landscape") -> None:
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    for i, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    ws.freeze_panes = "A2"
    title, stamp = ws.parent.clusterplan_print
    _print_setup(ws, title, stamp, orientation)
    cells = []
    for name in names:
        cell = WriteOnlyCell(ws, value=name)
        cell.font = Font(name=FONT, bold=True, color="FFFFFF")
        cell.fill = PatternFill("solid", fgColor=HEADER_FILL)
        cell.alignment = Alignment(vertical="center", wrap_text=True)
        cells.append(cell)
    ws.append(cells)


def _filter(ws: Any, columns: int, rows: int) -> None:
    from openpyxl.utils import get_column_letter

    ws.auto_filter.ref = f"A1:{get_column_letter(columns)}{max(rows, 1) + 1}"


def _cell(ws: Any, value: Any, fmt: str | None = None, bold: bool = False) -> Any:
    """One cell. Text is always a text cell (a leading = + - @ gets Excel's quote prefix, as OWASP
    advises); only an `escape.Formula`, which clusterplan writes itself, is a formula."""
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Font

    if isinstance(value, float) and (not math.isfinite(value) or abs(value) > EXCEL_MAX):
        value = None        # unknown: not a number Excel can hold (an overflowing price)
    text = isinstance(value, str) and not isinstance(value, Formula)
    cell = WriteOnlyCell(ws, value=cell_text(value) if text else value)
    if text:
        cell.data_type = "s"
        if formula_like(cell_text(value)):     # decided on the text the cell holds (controls removed)
            cell.quotePrefix = True
    if fmt:
        cell.number_format = fmt
    if bold:
        cell.font = Font(name=FONT, bold=True)
    return cell


class _TextSafeSheet:
    """A write-only worksheet whose rows hold no formula but clusterplan's own: every plain value goes
    through `_cell`, so a new sheet or column is safe without thinking about it."""

    def __init__(self, ws: Any) -> None:
        object.__setattr__(self, "_ws", ws)

    def append(self, row: Sequence[Any]) -> None:
        from openpyxl.cell.cell import Cell

        self._ws.append([v if isinstance(v, Cell) or v is None else _cell(self._ws, v) for v in row])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._ws, name, value)


class _TextSafeBook:
    def __init__(self, wb: Any) -> None:
        self._wb = wb

    def create_sheet(self, title: str) -> _TextSafeSheet:
        return _TextSafeSheet(self._wb.create_sheet(title))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wb, name)


def workbook_bytes(bom: Bom, plan: Plan, findings: Sequence[Finding], summary: dict[str, Any],
                   timestamp: datetime, kind: str = "bom") -> bytes:
    """The `bom` workbook (Summary, BOM, Power & Cooling, Findings) or the `cabling` one (Summary, Cabling)."""
    from openpyxl import Workbook

    book = Workbook(write_only=True)
    book.properties.creator = "clusterplan"
    book.properties.created = timestamp
    book.properties.modified = timestamp
    from validator.emit.workbook import FIXED_EPOCH
    from validator.emit.xlsx_bom import bom_sheet, power_sheet, sources_sheet, summary_sheet

    dated = timestamp.strftime("%Y-%m-%d") if timestamp != FIXED_EPOCH else "undated (not in git; use --timestamp)"
    book.clusterplan_print = (f"{summary.get('design', '')} ({kind})", dated)
    wb = _TextSafeBook(book)
    summary_sheet(wb, summary, bom if kind == "bom" else None)
    breaks: list[int] = []
    if kind == "cabling":
        _cabling_sheet(wb, plan)
    else:
        bom_sheet(wb, bom)
        sources_sheet(wb, bom)
        power_sheet(wb, bom)
        _findings_sheet(wb, findings)
    raw = io.BytesIO()
    wb.save(raw)
    return _package(raw.getvalue(), timestamp, _cabling_rows(plan, breaks) if kind == "cabling" else None, breaks)


def _package(data: bytes, timestamp: datetime, cabling_rows: Iterator[bytes] | None,
             breaks: list[int] | None = None) -> bytes:
    """Rewrite the package: the same fixed date on every entry (equal input, equal bytes), and the
    Cabling sheet's rows streamed in before its `</sheetData>`, a page break before each new rack."""
    date = (max(1980, timestamp.year), timestamp.month, timestamp.day, timestamp.hour, timestamp.minute,
            timestamp.second)
    src = zipfile.ZipFile(io.BytesIO(data))
    cabling = _sheet_path(src, "Cabling") if cabling_rows is not None else None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _fix_core(body, timestamp)
            fixed = zipfile.ZipInfo(info.filename, date_time=date)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            if info.filename != cabling or cabling_rows is None:
                dst.writestr(fixed, body)
                continue
            head, sep, tail = body.partition(b"</sheetData>")
            if not sep:   # openpyxl wrote an empty <sheetData/>
                head, _, tail = body.partition(b"<sheetData/>")
                head, tail = head + b"<sheetData>", tail
            with dst.open(fixed, "w") as fh:
                fh.write(head)
                for chunk in cabling_rows:
                    fh.write(chunk)
                fh.write(b"</sheetData>" + _with_breaks(tail, breaks or []))
    return out.getvalue()


def _with_breaks(tail: bytes, rows: list[int]) -> bytes:
    """The worksheet's tail with manual page breaks after `rows` (rowBreaks follows headerFooter)."""
    if not rows:
        return tail
    brk = "".join(f'<brk id="{r}" max="16383" man="1"/>' for r in rows)
    element = f'<rowBreaks count="{len(rows)}" manualBreakCount="{len(rows)}">{brk}</rowBreaks>'.encode()
    head, sep, rest = tail.rpartition(b"</headerFooter>")
    if sep:
        return head + sep + element + rest
    return tail.replace(b"</worksheet>", element + b"</worksheet>")


def _sheet_path(src: zipfile.ZipFile, title: str) -> str:
    """The zip entry of the worksheet titled `title` (via workbook.xml and its relationships)."""
    import re

    book = src.read("xl/workbook.xml").decode("utf-8")
    rels = src.read("xl/_rels/workbook.xml.rels").decode("utf-8")
    rid = re.search(rf'<sheet[^>]*name="{re.escape(title)}"[^>]*r:id="([^"]+)"', book)
    if rid is None:
        rid = re.search(rf'<sheet[^>]*r:id="([^"]+)"[^>]*name="{re.escape(title)}"', book)
    assert rid is not None, f"workbook has no sheet {title}"
    target = re.search(rf'<Relationship[^>]*Id="{rid.group(1)}"[^>]*Target="([^"]+)"', rels) or \
        re.search(rf'<Relationship[^>]*Target="([^"]+)"[^>]*Id="{rid.group(1)}"', rels)
    assert target is not None
    path = target.group(1).lstrip("/")
    return path if path.startswith("xl/") else f"xl/{path}"


def _fix_core(body: bytes, timestamp: datetime) -> bytes:
    import re

    stamp = timestamp.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    return re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)", rb"\g<1>" + stamp + rb"\g<3>", body)


def _cabling_sheet(wb: Any, plan: Plan) -> None:
    """Header, widths, frozen row and filter only: the rows are streamed into the package afterwards
    (`_cabling_rows`), because openpyxl spends ~13 us per cell and a 100k-GPU plan has millions."""
    ws = wb.create_sheet("Cabling")
    _header(ws, list(CABLING_COLUMNS), list(CABLING_WIDTHS))
    _filter(ws, len(CABLING_COLUMNS), plan.tally.links)


_COLUMNS = [chr(ord("A") + i) for i in range(len(CABLING_COLUMNS))]


def _cabling_rows(plan: Plan, breaks: list[int]) -> Iterator[bytes]:
    """The data rows of the Cabling sheet as SpreadsheetML (inline strings, plain numbers); `breaks` gets
    the row before each change of the A-end rack (a page per rack for the technician who patches it)."""
    from xml.sax.saxutils import escape

    from validator.emit.progress import progress

    chunk: list[str] = []
    total = plan.tally.links
    rack_col = CABLING_COLUMNS.index("a_rack")
    rack = None
    for n, row in enumerate(progress(plan.rows(), total, "workbook"), start=2):
        if rack is not None and row[rack_col] != rack:
            breaks.append(n - 1)
        rack = row[rack_col]
        cells = []
        for col, value in zip(_COLUMNS, row, strict=True):
            if isinstance(value, int | float) and not isinstance(value, bool):
                cells.append(f'<c r="{col}{n}"><v>{value:g}</v></c>' if isinstance(value, float)
                             else f'<c r="{col}{n}"><v>{value}</v></c>')
            else:
                cells.append(f'<c r="{col}{n}" t="inlineStr"><is><t>{escape(cell_text(str(value)))}</t></is></c>')
        chunk.append(f'<row r="{n}">{"".join(cells)}</row>')
        if len(chunk) >= 2000:
            yield "".join(chunk).encode("utf-8")
            chunk = []
    if chunk:
        yield "".join(chunk).encode("utf-8")


def _findings_sheet(wb: Any, findings: Sequence[Finding]) -> None:
    ws = wb.create_sheet("Findings")
    names = ["rule", "severity", "file", "line", "key path", "message", "hint", "waived"]
    _header(ws, names, [9, 9, 30, 6, 34, 80, 50, 8])
    for f in findings:
        ws.append([f.rule, f.severity, f.file, f.line, f.path, f.message, f.hint, "yes" if f.waived else ""])
    _filter(ws, len(names), len(findings))
