"""BOM and cabling plan as text, Markdown, CSV and JSON (the workbook is in export/xlsx.py)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from validator.derive.bom import ITEM_FIELDS, Bom, Item
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.escape import csv_row, known, to_json
from validator.emit.progress import progress


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
    """The totals under the BOM table: capex and what it leaves out, power and its basis, TCO."""
    t, p, c = bom.totals, bom.power, bom.tco
    lines = [f"capex {_money(t['capex_usd'])} over {t['priced_lines']} priced lines"
             + ("" if t["capex_complete"] else f"; PARTIAL: {t['unpriced_lines']} lines unpriced "
                f"({', '.join(t['unpriced_parts'])})"),
             "by category: " + ", ".join(f"{k} {_money(v)}" for k, v in t["capex_by_category_usd"].items()),
             "price confidence: " + ", ".join(f"{k} {_money(v)}" for k, v in t["capex_by_confidence_usd"].items())]
    if p["it_kw"] is None:
        lines.append(f"IT power unknown (at least {p['it_kw_known']:,.1f} kW from the known lines; no power figure "
                     f"for {', '.join(p['unknown_power_parts'])})")
    else:
        lines.append(f"IT power {p['it_kw']:,.1f} kW (servers {_kw(p['servers_kw'])}, switches "
                     f"{_kw(p['switches_kw'])}, optics {_kw(p['optics_kw'])}, cables {_kw(p['cables_kw'])}, "
                     f"storage {_kw(p['storage_kw'])}); facility {_kw(p['facility_kw'])} kW at PUE {p['pue']:g}")
    lines.append(f"power basis: {p['basis']}" + (f"; typical only: {', '.join(p['typical_parts'])}"
                                                 if p["typical_parts"] else ""))
    heaviest = {k: "unknown" if p[k] is None else f"{p[k]:,.1f} kW" for k in ("gpu_rack_kw", "network_rack_kw")}
    lines.append(f"{p['gpu_racks']} GPU racks (heaviest {heaviest['gpu_rack_kw']}), {p['network_racks']} network "
                 f"racks (heaviest {heaviest['network_rack_kw']}); per rack: clusterplan racks")
    inp = c["inputs"]
    if c["total_usd_per_year"] is None:
        lines.append("TCO unknown: " + ("capex is partial" if inp["capex_usd"] is None else "IT power is unknown"))
    else:
        lines.append(f"TCO {_money(c['total_usd_per_year'])} per year (depreciation over {inp['depreciation_years']:g} "
                     f"years {_money(c['depreciation_usd_per_year'])}, support {inp['support_pct_per_year']:g}% "
                     f"{_money(c['support_usd_per_year'])}, energy {c['energy_mwh_per_year']:,.0f} MWh "
                     f"{_money(c['energy_usd_per_year'])} at ${inp['electricity_usd_per_kwh']:g}/kWh and "
                     f"{inp['utilization']:.0%} utilization); {_cents(c['gpu_hour_usd'])} per busy GPU-hour")
    return lines


def bom_text(bom: Bom, markdown: bool = False) -> str:
    """The BOM as aligned text or Markdown, from templates/bom/ (validator/emit/render/bom.py)."""
    from validator.emit.render.bom import render_bom

    return render_bom("md" if markdown else "text", bom)


def cabling_csv_rows(plan: Plan) -> Iterable[str]:
    """The cabling plan as CSV lines, streamed (a 100k-GPU plan never sits in memory)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CABLING_COLUMNS)
    yield out.getvalue()
    total = plan.tally.links
    for row in progress(plan.rows(), total, "cabling"):
        out.seek(0)
        out.truncate()
        writer.writerow(csv_row(row))
        yield out.getvalue()


def cabling_json(plan: Plan) -> str:
    rows: list[dict[str, Any]] = [dict(zip(CABLING_COLUMNS, row, strict=True)) for row in plan.rows()]
    return to_json({"version": 1, "name": plan.topology.resolved.design.metadata.name, "links": rows},
                   indent=1, ensure_ascii=True) + "\n"
