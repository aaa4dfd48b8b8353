"""The Excel workbooks: `bom` writes Summary, BOM, Power & Cooling, Findings; `cabling` writes
Summary and Cabling. Every sheet prints: landscape, fit to one page wide, the title row repeated on
each page, the design name and date in the header, page numbers in the footer, frozen header row,
fonts named explicitly.

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
from validator.derive.bom import Bom, Item
from validator.derive.cabling import CABLING_COLUMNS, CABLING_WIDTHS, Plan
from validator.emit.escape import EXCEL_MAX, Formula, cell_text, formula_like

HEADER_FILL = "1F4E78"
FONT = "Calibri"          # named on every styled cell (the workbook default font is Calibri 11 too)
MONEY = '"$"#,##0'
KW = "#,##0.0"


def _print_setup(ws: Any, title: str, stamp: str) -> None:
    """Landscape, one page wide, row 1 repeated on every page, design and date in the header."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.print_options.gridLines = True
    for part, text in ((ws.oddHeader.left, title.replace("&", "&&")), (ws.oddHeader.center, "&A"),
                       (ws.oddHeader.right, stamp), (ws.oddFooter.center, "Page &P of &N")):
        part.text = text
        part.font = FONT
        part.size = 9


def _header(ws: Any, names: Sequence[str], widths: Sequence[float]) -> None:
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.utils import get_column_letter

    for i, w in enumerate(widths, start=1):
        ws.column_dimensions[get_column_letter(i)].width = w
    ws.freeze_panes = "A2"
    _print_setup(ws, *ws.parent.clusterplan_print)
    cells = []
    for name in names:
        cell = WriteOnlyCell(ws, value=name)
        cell.font = Font(name=FONT, bold=True, color="FFFFFF")
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
    book.clusterplan_print = (f"{summary.get('design', '')} ({kind})", timestamp.strftime("%Y-%m-%d"))
    wb = _TextSafeBook(book)
    _summary_sheet(wb, summary, bom if kind == "bom" else None)
    if kind == "cabling":
        _cabling_sheet(wb, plan)
    else:
        _bom_sheet(wb, bom)
        _power_sheet(wb, bom)
        _findings_sheet(wb, findings)
    raw = io.BytesIO()
    wb.save(raw)
    return _package(raw.getvalue(), timestamp, _cabling_rows(plan) if kind == "cabling" else None)


def _package(data: bytes, timestamp: datetime, cabling_rows: Iterator[bytes] | None) -> bytes:
    """Rewrite the package: the same fixed date on every entry (equal input, equal bytes), and the
    Cabling sheet's rows streamed in before its `</sheetData>`."""
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


def _summary_sheet(wb: Any, summary: dict[str, Any], bom: Bom | None) -> None:
    ws = wb.create_sheet("Summary")
    _header(ws, ["item", "value"], [34, 70])
    for key, value in summary.items():
        fmt = MONEY if key.endswith("(USD)") else (KW if key.endswith("(kW)") else None)
        ws.append([_cell(ws, key, bold=True), _cell(ws, value, fmt)])
    if bom is not None:
        ws.append([_cell(ws, "Capex, priced lines (USD)", bold=True),
                   _cell(ws, Formula(f"=BOM!M{_bom_rows(bom)[2]}"), MONEY)])


# BOM sheet columns: the price of a line is list price (the book's, per unit and length) less the discount;
# unit and extended price are formulas, so a price typed into the sheet flows to the subtotals and total.
BOM_COLUMNS = ["category", "part", "description", "qty", "spares", "fabric", "installed in", "unit power (W)",
               "power basis", "list price (USD)", "discount %", "unit price (USD)", "extended price (USD)",
               "included in", "price confidence", "price source"]
BOM_WIDTHS = [12, 22, 50, 8, 8, 10, 14, 14, 10, 16, 10, 16, 20, 12, 16, 60]


def _bom_rows(bom: Bom) -> tuple[int, list[str], int]:
    """The BOM sheet's last item row, the categories with a subtotal row, and the total's row."""
    last = len(bom.items) + 1
    categories = list(dict.fromkeys(i.category for i in bom.items if not i.included_in))
    return last, categories, last + 2 + len(categories)


def _list_price(item: Item) -> float | None:
    """The price before the line's discount (what column J holds)."""
    q = item.quote
    if q is None or item.unit_price is None:
        return None
    return item.unit_price if not q.discount_pct else round(q.base_usd + q.per_m_usd * _length(item), 2)


def _length(item: Item) -> float:
    return float(item.installed_in.removesuffix(" m")) if item.category == "cable" else 0.0


def _bom_sheet(wb: Any, bom: Bom) -> None:
    ws = wb.create_sheet("BOM")
    _header(ws, BOM_COLUMNS, BOM_WIDTHS)
    for n, item in enumerate(bom.items, start=2):
        q = item.quote
        listed = _list_price(item)
        unit = Formula(f'=IF(J{n}="","",ROUND(J{n}*(1-K{n}/100),2))')
        extended = None if item.included_in else Formula(f'=IF(L{n}="","",D{n}*L{n})')
        power: Any = item.unit_power_w if item.power_basis in ("max", "typical", "design") else \
            ("unknown" if item.power_basis is None else None)
        ws.append([item.category, item.part, item.description, item.qty, item.spares, item.fabric, item.installed_in,
                   _cell(ws, power, "#,##0.0"), item.power_basis or "unknown", _cell(ws, listed, MONEY),
                   _cell(ws, q.discount_pct if q else 0, "0.0"), _cell(ws, unit, MONEY), _cell(ws, extended, MONEY),
                   item.included_in, q.confidence if q else None, q.source if q else None])
    last, categories, total_row = _bom_rows(bom)
    ws.append([])
    first = last + 2
    for category in categories:
        ws.append([_cell(ws, "subtotal", bold=True), category, None, None, None, None, None, None, None, None, None,
                   None, _cell(ws, Formula(f'=SUMIF(A2:A{last},"{category}",M2:M{last})'), MONEY)])
    unpriced = Formula(f'=SUMPRODUCT((M2:M{last}="")*(N2:N{last}=""))')
    ws.append([_cell(ws, "total", bold=True), None, "capex of the priced lines (unpriced lines are not in it)",
               None, None, None, None, None, None, None, None, None,
               _cell(ws, Formula(f"=SUM(M{first}:M{total_row - 1})"), MONEY, bold=True)])
    ws.append([_cell(ws, "unpriced lines", bold=True), None, "lines with no price (type one into column J)", None,
               None, None, None, None, None, None, None, None, _cell(ws, unpriced, "0")])
    _filter(ws, len(BOM_COLUMNS), last)


def _cabling_sheet(wb: Any, plan: Plan) -> None:
    """Header, widths, frozen row and filter only: the rows are streamed into the package afterwards
    (`_cabling_rows`), because openpyxl spends ~13 us per cell and a 100k-GPU plan has millions."""
    ws = wb.create_sheet("Cabling")
    _header(ws, list(CABLING_COLUMNS), list(CABLING_WIDTHS))
    _filter(ws, len(CABLING_COLUMNS), plan.tally.links)


_COLUMNS = [chr(ord("A") + i) for i in range(len(CABLING_COLUMNS))]


def _cabling_rows(plan: Plan) -> Iterator[bytes]:
    """The data rows of the Cabling sheet as SpreadsheetML (inline strings, plain numbers)."""
    from xml.sax.saxutils import escape

    from validator.emit.progress import progress

    chunk: list[str] = []
    total = plan.tally.links
    for n, row in enumerate(progress(plan.rows(), total, "workbook"), start=2):
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


def _power_sheet(wb: Any, bom: Bom) -> None:
    """Power and cooling on the BOM's basis; an unknown figure is the text "unknown", and every formula
    that needs it says "unknown" too (never a sum that takes it as zero)."""
    ws = wb.create_sheet("Power & Cooling")
    p, c = bom.power, bom.tco

    def kw(value: float | None) -> Any:
        return "unknown" if value is None else value

    _header(ws, ["item", "value", "unit"], [36, 16, 12])
    rows = [("GPU racks", p["gpu_racks"], "racks", "0"), ("kW, heaviest GPU rack", kw(p["gpu_rack_kw"]), "kW", KW),
            ("network racks", p["network_racks"], "racks", "0"),
            ("kW, heaviest network rack", kw(p["network_rack_kw"]), "kW", KW),
            ("servers", kw(p["servers_kw"]), "kW", KW), ("switches", kw(p["switches_kw"]), "kW", KW),
            ("optics", kw(p["optics_kw"]), "kW", KW), ("cables", kw(p["cables_kw"]), "kW", KW),
            ("storage", kw(p["storage_kw"]), "kW", KW)]
    for label, value, unit, fmt in rows:
        ws.append([label, _cell(ws, value, fmt), unit])
    it_power = Formula('=IF(COUNT(B6:B10)=5,SUM(B6:B10),"unknown")')
    ws.append([_cell(ws, "IT power", bold=True), _cell(ws, it_power, KW, bold=True), "kW"])
    ws.append(["PUE", _cell(ws, p["pue"], "0.00"), ""])
    facility = Formula('=IF(ISNUMBER(B11),B11*B12,"unknown")')
    ws.append([_cell(ws, "facility power", bold=True), _cell(ws, facility, KW, bold=True), "kW"])
    for cooling, heat in sorted(p["heat_kw_by_cooling"].items()):
        ws.append([f"heat removed by {cooling}", _cell(ws, kw(heat), KW), "kW"])
    n = 13 + len(p["heat_kw_by_cooling"]) + 1
    inputs = c["inputs"]
    ws.append(["electricity price", _cell(ws, inputs["electricity_usd_per_kwh"], "0.000"), "USD/kWh"])
    ws.append(["utilization", _cell(ws, inputs["utilization"], "0%"), ""])
    hours = inputs["hours_per_year"]
    energy = Formula(f'=IF(ISNUMBER(B13),B13*{hours:g}*B{n + 1}/1000,"unknown")')
    ws.append(["energy per year", _cell(ws, energy, "#,##0"), "MWh"])
    cost = Formula(f'=IF(ISNUMBER(B13),B13*{hours:g}*B{n + 1}*B{n},"unknown")')
    ws.append(["energy cost per year", _cell(ws, cost, MONEY), "USD"])
    ws.append(["power basis", p["basis"], ""])


def _findings_sheet(wb: Any, findings: Sequence[Finding]) -> None:
    ws = wb.create_sheet("Findings")
    names = ["rule", "severity", "file", "line", "key path", "message", "hint", "waived"]
    _header(ws, names, [9, 9, 30, 6, 34, 80, 50, 8])
    for f in findings:
        ws.append([f.rule, f.severity, f.file, f.line, f.path, f.message, f.hint, "yes" if f.waived else ""])
    _filter(ws, len(names), len(findings))
