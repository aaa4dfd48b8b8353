"""BOM and cabling plan as text, Markdown, CSV and JSON (the workbook is in export/xlsx.py)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from validator.derive.bom import ITEM_FIELDS, Bom
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.escape import csv_row, to_json
from validator.emit.progress import progress


def _money(x: float | None) -> str:
    return "unpriced" if x is None else f"${x:,.0f}"


def bom_json(bom: Bom) -> str:
    return to_json(bom.as_dict(), ensure_ascii=True) + "\n"


def bom_csv(bom: Bom) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEM_FIELDS)
    for item in bom.items:
        writer.writerow(csv_row(item.as_dict().values()))
    return out.getvalue()


def bom_text(bom: Bom, markdown: bool = False) -> str:
    rows = [(i.category, i.part, str(i.qty), i.fabric, i.installed_in,
             "incl. in " + i.included_in if i.included_in else _money(i.unit_price),
             "" if i.included_in else _money(i.extended_price)) for i in bom.items]
    head = ("category", "part", "qty", "fabric", "installed in", "unit price", "extended")
    t, p = bom.totals, bom.power
    summary = [
        f"capex {_money(t['capex_usd'])} over {t['priced_lines']} priced lines; {t['unpriced_lines']} lines "
        f"unpriced ({', '.join(t['unpriced_parts']) or 'none'})",
        f"IT power {p['it_kw']:,.1f} kW (servers {p['servers_kw']:,.1f}, switches {p['switches_kw']:,.1f}, optics "
        f"{p['optics_kw']:,.1f}); facility {p['facility_kw']:,.1f} kW at PUE {p['pue']:g}; "
        f"{p['energy_mwh_per_year']:,.0f} MWh and ${p['energy_cost_per_year_usd']:,.0f} per year",
        f"{p['gpu_racks']} GPU racks at {p['gpu_rack_kw']:,.1f} kW, {p['network_racks']} network racks",
    ]
    if markdown:
        lines = [f"# Bill of materials: {bom.name}", "", "| " + " | ".join(head) + " |",
                 "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines + [""] + [f"- {s}" for s in summary]) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{'>' if i in (2, 5, 6) else '<'}{w}}}" for i, w in enumerate(widths))
    lines = [f"{bom.name}  {bom.file}", fmt.format(*head), *(fmt.format(*r) for r in rows), ""]
    return "\n".join(lines + summary) + "\n"


def cabling_csv_rows(plan: Plan) -> Iterable[str]:
    """The cabling plan as CSV lines, streamed (a 100k-GPU plan never sits in memory)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CABLING_COLUMNS)
    yield out.getvalue()
    total = plan.tally.links
    for run in progress(plan.all_runs(), total, "cabling"):
        out.seek(0)
        out.truncate()
        writer.writerow(csv_row(plan.row(run)))
        yield out.getvalue()


def cabling_json(plan: Plan) -> str:
    rows: list[dict[str, Any]] = [dict(zip(CABLING_COLUMNS, plan.row(run), strict=True)) for run in plan.all_runs()]
    return to_json({"version": 1, "name": plan.topology.resolved.design.metadata.name, "links": rows},
                   indent=1, ensure_ascii=True) + "\n"
