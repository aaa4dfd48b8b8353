"""BOM and cabling plan as text, Markdown, CSV and JSON (the workbook is in export/xlsx.py)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from typing import Any

from validator.derive.bom import ITEM_FIELDS, Bom
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.progress import progress


def bom_json(bom: Bom) -> str:
    return json.dumps(bom.as_dict(), indent=2, sort_keys=True) + "\n"


def bom_csv(bom: Bom) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ITEM_FIELDS)
    for item in bom.items:
        writer.writerow(["" if v is None else v for v in item.as_dict().values()])
    return out.getvalue()


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
    for run in progress(plan.all_runs(), total, "cabling"):
        out.seek(0)
        out.truncate()
        writer.writerow(plan.row(run))
        yield out.getvalue()


def cabling_json(plan: Plan) -> str:
    rows: list[dict[str, Any]] = [dict(zip(CABLING_COLUMNS, plan.row(run), strict=True)) for run in plan.all_runs()]
    return json.dumps({"version": 1, "name": plan.topology.resolved.design.metadata.name, "links": rows},
                      indent=1, sort_keys=True) + "\n"
