"""The Excel workbook: Summary, BOM, Cabling, Power & Cooling, Findings.

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
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.escape import Formula, cell_text, formula_like

HEADER_FILL = "1F4E78"
MONEY = '"$"#,##0'
KW = "#,##0.0"


def _header(ws: Any, names: Sequence[str], widths: Sequence[float]) -> None:
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    for i, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    ws.freeze_panes = "A2"
    cells = []
    for name in names:
        cell = WriteOnlyCell(ws, value=name)
        cell.font = Font(bold=True, color="FFFFFF")
        cell.fill = PatternFill("solid", fgColor=HEADER_FILL)
        cell.alignment = Alignment(vertical="center")
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

    if isinstance(value, float) and not math.isfinite(value):
        value = None
    text = isinstance(value, str) and not isinstance(value, Formula)
    cell = WriteOnlyCell(ws, value=cell_text(value) if text else value)
    if text:
        cell.data_type = "s"
        if formula_like(value):
            cell.quotePrefix = True
    if fmt:
        cell.number_format = fmt
    if bold:
        cell.font = Font(bold=True)
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
                   timestamp: datetime) -> bytes:
    from openpyxl import Workbook

    wb = _TextSafeBook(Workbook(write_only=True))
    wb.properties.creator = "clusterplan"
    wb.properties.created = timestamp
    wb.properties.modified = timestamp
    _summary_sheet(wb, summary, bom)
    _bom_sheet(wb, bom)
    _cabling_sheet(wb, plan)
    _power_sheet(wb, bom)
    _findings_sheet(wb, findings)
    raw = io.BytesIO()
    wb.save(raw)
    return _package(raw.getvalue(), timestamp, _cabling_rows(plan))


def _package(data: bytes, timestamp: datetime, cabling_rows: Iterator[bytes]) -> bytes:
    """Rewrite the package: the same fixed date on every entry (equal input, equal bytes), and the
    Cabling sheet's rows streamed in before its `</sheetData>`."""
    date = (max(1980, timestamp.year), timestamp.month, timestamp.day, timestamp.hour, timestamp.minute,
            timestamp.second)
    src = zipfile.ZipFile(io.BytesIO(data))
    cabling = _sheet_path(src, "Cabling")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _fix_core(body, timestamp)
            fixed = zipfile.ZipInfo(info.filename, date_time=date)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            if info.filename != cabling:
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
                fh.write(b"</sheetData>" + tail)
    return out.getvalue()


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


def _summary_sheet(wb: Any, summary: dict[str, Any], bom: Bom) -> None:
    ws = wb.create_sheet("Summary")
    _header(ws, ["item", "value"], [34, 70])
    for key, value in summary.items():
        fmt = MONEY if key.endswith("(USD)") else (KW if key.endswith("(kW)") else None)
        ws.append([_cell(ws, key, bold=True), _cell(ws, value, fmt)])
    ws.append([_cell(ws, "Capex, priced lines (USD)", bold=True),
               _cell(ws, Formula(f"=BOM!J{len(bom.items) + 2}"), MONEY)])


def _bom_sheet(wb: Any, bom: Bom) -> None:
    ws = wb.create_sheet("BOM")
    names = ["category", "part", "description", "qty", "spares", "fabric", "installed in", "unit power (W)",
             "unit price (USD)", "extended price (USD)", "included in"]
    _header(ws, names, [12, 22, 50, 8, 8, 10, 14, 14, 16, 20, 12])
    for n, item in enumerate(bom.items, start=2):
        extended = None if item.included_in or item.unit_price is None else Formula(f"=D{n}*I{n}")
        ws.append([item.category, item.part, item.description, item.qty, item.spares, item.fabric, item.installed_in,
                   _cell(ws, item.unit_power_w, "#,##0"), _cell(ws, item.unit_price, MONEY),
                   _cell(ws, extended, MONEY), item.included_in])
    last = len(bom.items) + 1
    ws.append([_cell(ws, "total", bold=True), None, f"{bom.totals['unpriced_lines']} unpriced line(s) not in "
               "the total", Formula(f"=SUM(D2:D{last})"), Formula(f"=SUM(E2:E{last})"), None, None, None, None,
               _cell(ws, Formula(f"=SUM(J2:J{last})"), MONEY, bold=True), None])
    _filter(ws, len(names), last)


def _cabling_sheet(wb: Any, plan: Plan) -> None:
    """Header, widths, frozen row and filter only: the rows are streamed into the package afterwards
    (`_cabling_rows`), because openpyxl spends ~13 us per cell and a 100k-GPU plan has millions."""
    ws = wb.create_sheet("Cabling")
    _header(ws, list(CABLING_COLUMNS), [9, 30, 7, 9, 6, 30, 7, 9, 6, 10, 8, 18, 18, 18, 9])
    _filter(ws, len(CABLING_COLUMNS), plan.tally.links)


_COLUMNS = [chr(ord("A") + i) for i in range(len(CABLING_COLUMNS))]


def _cabling_rows(plan: Plan) -> Iterator[bytes]:
    """The data rows of the Cabling sheet as SpreadsheetML (inline strings, plain numbers)."""
    from xml.sax.saxutils import escape

    from validator.emit.progress import progress

    chunk: list[str] = []
    total = plan.tally.links
    for n, run in enumerate(progress(plan.all_runs(), total, "workbook"), start=2):
        cells = []
        for col, value in zip(_COLUMNS, plan.row(run), strict=True):
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


def _power_sheet(wb: Any, bom: Bom) -> None:
    ws = wb.create_sheet("Power & Cooling")
    p = bom.power
    _header(ws, ["item", "value", "unit"], [36, 16, 12])
    rows = [("GPU racks", p["gpu_racks"], "racks", "0"), ("kW per GPU rack", p["gpu_rack_kw"], "kW", KW),
            ("network racks", p["network_racks"], "racks", "0"),
            ("kW per network rack", p["network_rack_kw"], "kW", KW),
            ("servers", p["servers_kw"], "kW", KW), ("switches", p["switches_kw"], "kW", KW),
            ("optics", p["optics_kw"], "kW", KW), ("storage", p["storage_kw"], "kW", KW)]
    for label, value, unit, fmt in rows:
        ws.append([label, _cell(ws, value, fmt), unit])
    ws.append([_cell(ws, "IT power", bold=True), _cell(ws, Formula("=SUM(B6:B9)"), KW, bold=True), "kW"])
    ws.append(["PUE", _cell(ws, p["pue"], "0.00"), ""])
    ws.append([_cell(ws, "facility power", bold=True), _cell(ws, Formula("=B10*B11"), KW, bold=True), "kW"])
    for cooling, kw in sorted(p["heat_kw_by_cooling"].items()):
        ws.append([f"heat removed by {cooling}", _cell(ws, kw, KW), "kW"])
    ws.append(["electricity price", _cell(ws, p["electricity_usd_per_kwh"], "0.000"), "USD/kWh"])
    n = 12 + len(p["heat_kw_by_cooling"]) + 1
    hours = p["hours_per_year"]
    ws.append(["energy per year", _cell(ws, Formula(f"=B12*{hours:g}/1000"), "#,##0"), "MWh"])
    ws.append(["energy cost per year", _cell(ws, Formula(f"=B12*{hours:g}*B{n}"), MONEY), "USD"])


def _findings_sheet(wb: Any, findings: Sequence[Finding]) -> None:
    ws = wb.create_sheet("Findings")
    names = ["rule", "severity", "file", "line", "key path", "message", "hint", "waived"]
    _header(ws, names, [9, 9, 30, 6, 34, 80, 50, 8])
    for f in findings:
        ws.append([f.rule, f.severity, f.file, f.line, f.path, f.message, f.hint, "yes" if f.waived else ""])
    _filter(ws, len(names), len(findings))
