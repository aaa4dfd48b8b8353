"""BOM and cabling plan as text, Markdown, CSV and JSON (the workbook is in export/xlsx.py)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from typing import Any

from validator.derive.bom import ITEM_FIELDS, Bom, Item
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.cabling_csv import cabling_csv
from validator.emit.escape import csv_row, known, to_json


def _cents(x: float | None) -> str:
    return "unknown" if known(x) is None else f"${x:,.2f}"


def _money(x: float | None) -> str:
    if x is not None and known(x) is None:
        return "unknown"      # not finite, or past what a sheet holds (an overflowing price)
    return "unpriced" if x is None else f"${x:,.0f}"


def _kw(x: float | None) -> str:
    return "unknown" if x is None else f"{x:,.1f}"


def unit_power(item: Item | dict[str, Any]) -> str:
    """A line's unit power as shown: watts (with `typ` for a typical figure), `incl.`, `-` or `unknown`."""
    basis, w = (item.power_basis, item.unit_power_w) if isinstance(item, Item) else \
        (item["power_basis"], item["unit_power_w"])
    if basis is None:
        return "unknown"
    if basis == "included":
        return "incl."
    if basis == "pue" or w is None:
        return "-"
    return (f"{w:,.0f}" if w >= 100 else f"{w:g}") + (" typ" if basis == "typical" else "")


def bom_json(bom: Bom) -> str:
    return to_json(bom.as_dict(), ensure_ascii=True) + "\n"


def bom_csv(bom: Bom) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEM_FIELDS)
    for item in bom.items:
        writer.writerow(csv_row(item.as_dict().values()))
    return out.getvalue()


def bom_summary(bom: Bom) -> list[str]:
    """The totals under the BOM table: capex range and what it leaves out, power and its basis, TCO."""
    t, p = bom.totals, bom.power
    lines = [f"capex {_money(t['capex_expected'])} expected, range {_money(t['capex_low'])} to "
             f"{_money(t['capex_high'])}, over {t['priced_lines']} priced lines"
             + ("" if t["capex_complete"] else f"; PARTIAL: {t['unpriced_lines']} lines unpriced "
                f"({', '.join(t['unpriced_parts'])})"),
             "by category: " + ", ".join(f"{k} {_money(v)}" for k, v in t["capex_by_category_usd"].items()),
             "by price basis: " + ", ".join(f"{k} {_money(v)}" for k, v in t["capex_by_basis_usd"].items())]
    if t["weak_price_parts"]:
        lines.append(f"derived or proxy prices (not a vendor's or a market figure): {', '.join(t['weak_price_parts'])}")
    if p["it_kw"] is None:
        lines.append(f"IT power unknown (at least {p['it_kw_known']:,.1f} kW from the known lines; no power figure "
                     f"for {', '.join(p['unknown_power_parts'])})")
    else:
        lines.append(f"IT power {p['it_kw']:,.1f} kW (servers {_kw(p['servers_kw'])}, switches "
                     f"{_kw(p['switches_kw'])}, optics {_kw(p['optics_kw'])}, cables {_kw(p['cables_kw'])}, "
                     f"storage {_kw(p['storage_kw'])}, appliances {_kw(p['appliances_kw'])}); facility "
                     f"{_kw(p['facility_kw'])} kW at PUE {p['pue']:g}")
    lines.append(f"power basis: {p['basis']}" + (f"; typical only: {', '.join(p['typical_parts'])}"
                                                 if p["typical_parts"] else ""))
    heaviest = {k: "unknown" if p[k] is None else f"{p[k]:,.1f} kW" for k in ("gpu_rack_kw", "network_rack_kw")}
    lines.append(f"{p['gpu_racks']} GPU racks (heaviest {heaviest['gpu_rack_kw']}), {p['network_racks']} network "
                 f"racks (heaviest {heaviest['network_rack_kw']}); per rack: clusterplan racks")
    return lines + tco_lines(bom.tco)


def tco_lines(c: dict[str, Any]) -> list[str]:
    """The TCO per year, its parts and the assumptions beside them."""
    inp = c["inputs"]
    if c["total_usd_per_year"] is None:
        return ["TCO unknown: " + ("capex is partial" if inp["capex_usd"] is None else "IT power is unknown")]
    a = c["assumptions"]
    lines = [f"TCO {_money(c['total_usd_per_year'])} per year: capital {_money(c['depreciation_usd_per_year'])} "
             f"depreciation over {inp['depreciation_years']:g} years + {_money(c['cost_of_capital_usd_per_year'])} "
             f"cost of capital at {inp['cost_of_capital_pct']:g}%, support {_money(c['support_usd_per_year'])} "
             f"({inp['support_pct_dgx']:g}% of DGX systems, {inp['support_pct_per_year']:g}% of the rest), energy "
             f"{_money(c['energy_usd_per_year'])} ({c['energy_mwh_per_year']:,.0f} MWh at the expected draw "
             f"{c['expected_kw']:,.1f} kW = IT max x {inp['expected_draw_fraction']:g} x {inp['utilization']:.0%} "
             f"utilization, PUE {inp['pue']:g}, ${inp['electricity_usd_per_kwh']:g}/kWh), colocation "
             f"{_money(c['colocation_usd_per_year'])} (IT max at ${inp['colocation_usd_per_kw_month']:g}/kW-month), "
             f"staff {_money(c['staff_usd_per_year'])}",
             f"{_cents(c['gpu_hour_usd'])} per busy GPU-hour (capex range: {_cents(c['gpu_hour_usd_low'])} to "
             f"{_cents(c['gpu_hour_usd_high'])})"]
    lines.append("assumptions: " + "; ".join(f"{k} {v['value']:g} ({v['from']})" for k, v in a.items())
                 + " (sources: validator/data/defaults.yaml; set them in .clusterplan.yaml tco:)")
    return lines


def bom_text(bom: Bom, markdown: bool = False) -> str:
    """The BOM as aligned text or Markdown, from templates/bom/ (validator/emit/render/bom.py)."""
    from validator.emit.render.bom import render_bom

    return render_bom("md" if markdown else "text", bom)


def cabling_filter(rack: str | None = None, device: str | None = None) -> Callable[[tuple[object, ...]], bool]:
    """The rows a technician patching one rack or one switch needs: links with either end in `rack`
    (its name, e.g. R01-09) or at `device` (a switch or server name)."""
    a_rack, z_rack = CABLING_COLUMNS.index("a_rack"), CABLING_COLUMNS.index("z_rack")
    a_dev, z_dev = CABLING_COLUMNS.index("a_device"), CABLING_COLUMNS.index("z_device")

    def keep(row: tuple[object, ...]) -> bool:
        return ((rack is None or rack in (row[a_rack], row[z_rack]))
                and (device is None or device in (row[a_dev], row[z_dev])))

    return keep


def cabling_csv_rows(plan: Plan, keep: Callable[[tuple[object, ...]], bool] | None = None) -> Iterable[str]:
    """The cabling plan as CSV text, streamed (a 100k-GPU plan never sits in memory) in blocks of whole lines
    (emit/cabling_csv.py); `keep` selects rows (cabling_filter)."""
    return cabling_csv(plan, keep)


def cabling_json(plan: Plan, keep: Callable[[tuple[object, ...]], bool] | None = None) -> str:
    rows: list[dict[str, Any]] = [dict(zip(CABLING_COLUMNS, row, strict=True)) for row in plan.rows()
                                  if keep is None or keep(row)]
    return to_json({"version": 1, "name": plan.topology.resolved.design.metadata.name, "links": rows},
                   indent=1, ensure_ascii=True) + "\n"
