"""The tables of `clusterplan sweep` (text, CSV, JSON, xlsx): one row per grid point.

The rows are plain dicts (validator/workflows/sweep.py row_of); unknown figures are None and print as
`unknown`, never as 0.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from validator.emit.escape import cell_text, csv_row, formula_like, json_safe, to_json

# column -> (heading, format); the kind decides which performance columns a table shows
COMMON = ("gpus", "it_kw", "facility_kw", "capex_usd", "gpu_hour_usd")
TRAINING = ("mfu", "tokens_per_s", "idle_gpus", "time_to_train_days", "cost_per_million_tokens")
INFERENCE = ("output_tokens_per_s_per_gpu", "ttft_ms", "tpot_ms", "replicas_needed", "cost_per_million_tokens")
TAIL = ("errors", "warnings", "error_rules")
HEADINGS = {
    "point": "#", "gpus": "GPUs", "it_kw": "IT kW", "facility_kw": "facility kW", "capex_usd": "capex $",
    "gpu_hour_usd": "$/GPU-h", "mfu": "MFU", "tokens_per_s": "tokens/s", "idle_gpus": "idle GPUs",
    "time_to_train_days": "days",
    "cost_per_million_tokens": "$/Mtok", "output_tokens_per_s_per_gpu": "out tok/s/GPU", "ttft_ms": "TTFT p99 ms",
    "tpot_ms": "TPOT p99 ms", "replicas_needed": "replicas needed", "errors": "errors", "warnings": "warnings",
    "error_rules": "error rules",
}


def columns(kind: str, settings: Sequence[str]) -> list[str]:
    perf = TRAINING if kind == "TrainingCluster" else INFERENCE
    return ["point", *settings, *COMMON, *perf, *TAIL]


def cell(key: str, value: Any) -> str:
    """A value as the text table shows it; None is `unknown` (an error row has no figures: `-`)."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return value
    if key == "mfu":
        return f"{100 * value:.1f}%"
    if key in ("capex_usd", "tokens_per_s"):
        return f"{value:,.0f}"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{'>' if right[i] else '<'}{w}}}" for i, w in enumerate(widths))
    return "".join(line.rstrip() + "\n" for line in [fmt.format(*head), *(fmt.format(*r) for r in rows)])


def _visible(row: dict[str, Any], key: str) -> str:
    """A point whose design could not be read has no figures at all: `-`, not `unknown`; a point with error
    findings shows `fails` instead of performance figures."""
    if row.get("gpus") is None and key in (*COMMON, *TRAINING, *INFERENCE):
        return "-"
    if row.get("withheld") and key in (*TRAINING, *INFERENCE) and key != "idle_gpus":   # a count, not a figure
        return "fails"
    return cell(key, row.get(key))


def sweep_text(design: str, kind: str, settings: Sequence[str], rows: Sequence[dict[str, Any]], zipped: bool) -> str:
    cols = columns(kind, settings)
    head = [HEADINGS.get(c, c) for c in cols]
    body = [[_visible(r, c) for c in cols] for r in rows]
    right = [c not in ("error_rules", *settings) for c in cols]
    failing = sum(1 for r in rows if r["errors"])
    title = (f"{design}: {len(rows)} point{'s' if len(rows) != 1 else ''} ({'zip' if zipped else 'grid'} of "
             f"{', '.join(settings)}); {failing} with errors\n")
    notes = []
    if any("fails" in r for r in body):
        notes.append("fails: the point has error findings (error rules), so its performance figures are not "
                     "shown; `clusterplan validate` on the point says what to change\n")
    if any("unknown" in r for r in body):
        notes.append("unknown: the figure needs a price or power figure the catalog lacks, or an input the design "
                     "does not give (`clusterplan bom` and `clusterplan estimate` name it)\n")
    if any("-" in r for r in body):
        notes.append("-: the point's design could not be read; run `clusterplan validate` on it to see why\n")
    return title + text_table(head, body, right) + "".join(notes)


def sweep_csv(kind: str, settings: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    cols = columns(kind, settings)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for r in rows:
        writer.writerow(csv_row(r.get(c) for c in cols))
    return out.getvalue()


def sweep_json(design: str, kind: str, settings: Sequence[str], rows: Sequence[dict[str, Any]], zipped: bool) -> str:
    body = {"version": 1, "design": design, "kind": kind, "mode": "zip" if zipped else "grid",
            "settings": list(settings), "columns": columns(kind, settings), "rows": list(rows)}
    return to_json(body) + "\n"


def sweep_xlsx(kind: str, settings: Sequence[str], rows: Sequence[dict[str, Any]]) -> bytes:
    """One sheet, one row per point, numbers as numbers; the same bytes for the same rows."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    cols = columns(kind, settings)
    wb = Workbook()
    ws = wb.active
    ws.title = "Sweep"
    ws.append([HEADINGS.get(c, c) for c in cols])
    for c in ws[1]:
        c.font = Font(bold=True)
    for r in rows:
        ws.append([cell_text(v) if isinstance(v, str) else json_safe(v) for v in (r.get(c) for c in cols)])
        for cell in ws[ws.max_row]:
            if isinstance(cell.value, str) and formula_like(cell.value):   # text, never a formula (OWASP)
                cell.data_type = "s"
                cell.quotePrefix = True
    ws.freeze_panes = "A2"
    stamp = datetime(1980, 1, 1, tzinfo=UTC)
    wb.properties.created = wb.properties.modified = stamp
    raw = io.BytesIO()
    wb.save(raw)
    return _fixed_dates(raw.getvalue(), stamp)


def _fixed_dates(data: bytes, stamp: datetime) -> bytes:
    """Rewrite the zip with one fixed date on every entry and in docProps (equal rows, equal bytes)."""
    import re
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)", rb"\g<1>" + iso +
                              rb"\g<3>", body)
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, body)
    return out.getvalue()
