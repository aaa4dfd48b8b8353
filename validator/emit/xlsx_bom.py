"""The BOM workbook's sheets: Summary, BOM, Sources and Power & Cooling (the package, the cabling sheet
and the shared cell helpers are in validator/emit/xlsx.py).

BOM prints portrait on A4 or Letter at 8 pt or more (tests/test_workbook_print.py checks LibreOffice's
PDF): the print area is columns A-J, descriptions wrapped, the price sources on a sheet of their own
(Sources, one row per BOM line, same row numbers). The inputs stand right of the print area: a line's
price is its list price (column L) less its discount (M); unit (H) and extended price (I) are formulas,
and so are the subtotals, the total and the capex range: each line's low and high are its extended price
times the multipliers on Sources (the source's own range, else the basis's spread), so a price typed
into column L moves all three ends when the sheet recalculates.
"""

from __future__ import annotations

from typing import Any

from validator.derive.bom import Bom, Item
from validator.emit.escape import Formula
from validator.emit.xlsx import KW, MONEY, _cell, _filter, _header

BOM_COLUMNS = ["category", "part", "description", "qty", "spares", "fabric / in", "unit W", "unit price (USD)",
               "extended (USD)", "price basis", "incl. in", "list price (USD)", "disc. %"]
BOM_WIDTHS = [8, 13, 20, 6, 5, 9, 8, 10, 12, 7, 7, 11, 6]
PRINTED = "J"             # the last printed column: inputs (K-M) stand right of it
SOURCE_COLUMNS = ["part", "category", "price basis", "low x", "high x", "source class", "date", "price book",
                  "source", "derivation"]


def summary_sheet(wb: Any, summary: dict[str, Any], bom: Bom | None) -> None:
    ws = wb.create_sheet("Summary")
    _header(ws, ["item", "value"], [34, 70])
    for key, value in summary.items():
        fmt = MONEY if key.endswith("(USD)") else (KW if key.endswith("(kW)") else None)
        ws.append([_cell(ws, key, bold=True), _wrapped(ws, value) if isinstance(value, str) else _cell(ws, value, fmt)])
    if bom is not None:
        _, _, total = bom_rows(bom)
        for label, row in (("Capex, priced lines (USD)", total), ("Capex low (USD)", total + 2),
                           ("Capex high (USD)", total + 3)):
            ws.append([_cell(ws, label, bold=True), _cell(ws, Formula(f"=BOM!I{row}"), MONEY)])


def bom_rows(bom: Bom) -> tuple[int, list[str], int]:
    """The BOM sheet's last item row, the categories with a subtotal row, and the total's row."""
    last = len(bom.items) + 1
    categories = list(dict.fromkeys(i.category for i in bom.items if not i.included_in))
    return last, categories, last + 2 + len(categories)


def _list_price(item: Item) -> float | None:
    """The price before the line's discount (what column L holds)."""
    q = item.quote
    if q is None or item.unit_price is None:
        return None
    return item.unit_price if not q.discount_pct else round(q.base_usd + q.per_m_usd * _length(item), 2)


def _length(item: Item) -> float:
    return float(item.installed_in.removesuffix(" m")) if item.category == "cable" else 0.0


def _power(ws: Any, item: Item) -> Any:
    """Unit power: watts (a typical figure says `typ` in its format), unknown, incl. or -."""
    if item.power_basis in ("max", "typical", "design") and item.unit_power_w is not None:
        return _cell(ws, item.unit_power_w, '#,##0.0" typ"' if item.power_basis == "typical" else "#,##0.0")
    return "unknown" if item.power_basis is None else ("incl." if item.power_basis == "included" else "-")


def _wrapped(ws: Any, value: Any) -> Any:
    from openpyxl.styles import Alignment

    cell = _cell(ws, value)
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    return cell


def bom_sheet(wb: Any, bom: Bom) -> None:
    ws = wb.create_sheet("BOM")
    _header(ws, BOM_COLUMNS, BOM_WIDTHS, "portrait")
    ws.page_margins.left = ws.page_margins.right = 0.3
    for n, item in enumerate(bom.items, start=2):
        q = item.quote
        unit = Formula(f'=IF(L{n}="","",ROUND(L{n}*(1-M{n}/100),2))')
        extended = None if item.included_in else Formula(f'=IF(H{n}="","",D{n}*H{n})')
        where = item.fabric if item.fabric != "none" else ""
        ws.append([item.category, _wrapped(ws, item.part), _wrapped(ws, item.description), item.qty, item.spares,
                   _wrapped(ws, f"{where} {item.installed_in}".strip()), _power(ws, item), _cell(ws, unit, MONEY),
                   _cell(ws, extended, MONEY), None if item.included_in or q is None else q.basis, item.included_in,
                   _cell(ws, _list_price(item), MONEY), _cell(ws, q.discount_pct if q else 0, "0.0")])
    _totals(ws, bom)
    ws.print_area = f"A1:{PRINTED}{bom_rows(bom)[2] + 3}"
    _filter(ws, len(BOM_COLUMNS), len(bom.items) + 1)


def _total_row(ws: Any, label: str, text: str | None, value: Any, fmt: str = MONEY, bold: bool = False) -> None:
    ws.append([_cell(ws, label, bold=True), None, _wrapped(ws, text) if text else None, None, None, None, None, None,
               _cell(ws, value, fmt, bold=bold)])


def _totals(ws: Any, bom: Bom) -> None:
    last, categories, total_row = bom_rows(bom)
    ws.append([])
    first = last + 2
    for category in categories:
        ws.append([_cell(ws, "subtotal", bold=True), category, None, None, None, None, None, None,
                   _cell(ws, Formula(f'=SUMIF(A2:A{last},"{category}",I2:I{last})'), MONEY)])
    _total_row(ws, "total", "capex expected: the priced lines (unpriced lines are not in it)",
               Formula(f"=SUM(I{first}:I{total_row - 1})"), bold=True)
    _total_row(ws, "unpriced lines", "lines with no price (type one into column L)",
               Formula(f'=SUMPRODUCT((I2:I{last}="")*(K2:K{last}=""))'), "0")
    for label, col in (("capex low", "D"), ("capex high", "E")):
        _total_row(ws, label, f"extended prices x the {label.split()[1]} multipliers (Sources!{col})",
                   Formula(f"=SUMPRODUCT(I2:I{last},Sources!{col}2:{col}{last})"), bold=True)


def sources_sheet(wb: Any, bom: Bom) -> None:
    """Where each BOM line's price comes from, row for row with the BOM sheet, and its range multipliers."""
    ws = wb.create_sheet("Sources")
    _header(ws, SOURCE_COLUMNS, [16, 10, 8, 6, 6, 10, 9, 16, 60, 50])
    for item in bom.items:
        q = item.quote
        low = high = 1.0          # a price typed into an unpriced line counts as a quote
        if q is not None and item.unit_price and item.unit_low is not None and item.unit_high is not None:
            low, high = item.unit_low / item.unit_price, item.unit_high / item.unit_price
        ws.append([item.part, item.category, q.basis if q else "unpriced", _cell(ws, low, "0.00"),
                   _cell(ws, high, "0.00"), q.source_class if q else None, q.date if q else None,
                   q.origin if q else None, _wrapped(ws, q.source if q else None),
                   _wrapped(ws, q.derivation if q else None)])
    _filter(ws, len(SOURCE_COLUMNS), len(bom.items))


def power_sheet(wb: Any, bom: Bom) -> None:
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
            ("storage", kw(p["storage_kw"]), "kW", KW), ("appliances", kw(p["appliances_kw"]), "kW", KW)]
    for label, value, unit, fmt in rows:
        ws.append([label, _cell(ws, value, fmt), unit])
    it_power = Formula('=IF(COUNT(B6:B11)=6,SUM(B6:B11),"unknown")')
    ws.append([_cell(ws, "IT power", bold=True), _cell(ws, it_power, KW, bold=True),
               "kW (maximum)"])
    ws.append(["PUE", _cell(ws, p["pue"], "0.00"), ""])
    facility = Formula('=IF(ISNUMBER(B12),B12*B13,"unknown")')
    ws.append([_cell(ws, "facility power", bold=True), _cell(ws, facility, KW, bold=True), "kW"])
    for cooling, heat in sorted(p["heat_kw_by_cooling"].items()):
        ws.append([f"heat removed by {cooling}", _cell(ws, kw(heat), KW), "kW"])
    n = 14 + len(p["heat_kw_by_cooling"]) + 1
    inputs = c["inputs"]
    ws.append(["electricity price", _cell(ws, inputs["electricity_usd_per_kwh"], "0.000"), "USD/kWh"])
    ws.append(["utilization", _cell(ws, inputs["utilization"], "0%"), ""])
    ws.append(["expected draw / maximum", _cell(ws, inputs["expected_draw_fraction"], "0.000"), ""])
    hours = inputs["hours_per_year"]
    expected = f"B14*B{n + 2}*B{n + 1}"
    energy = Formula(f'=IF(ISNUMBER(B14),{expected}*{hours:g}/1000,"unknown")')
    ws.append(["energy per year (at the expected draw)", _cell(ws, energy, "#,##0"), "MWh"])
    cost = Formula(f'=IF(ISNUMBER(B14),{expected}*{hours:g}*B{n},"unknown")')
    ws.append(["energy cost per year", _cell(ws, cost, MONEY), "USD"])
    ws.append(["power basis", p["basis"], ""])

