"""`clusterplan report`: everything about one design on one self-contained HTML page.

Gathers what the other commands print (validate's findings with their source lines, the estimate, the
BOM with cost and power, the failure domains, the topology overview and, given a base, the diff) as plain
data and hands it to `validator.emit.html` to render. Numbers are the same objects the JSON outputs are
made of, so the page's totals equal `clusterplan bom` and `clusterplan estimate --format json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.base.errors import ToolError
from validator.base.paths import display_name
from validator.check.result import Analysis
from validator.derive import Derived
from validator.read.config import RunConfig


def _findings(analysis: Analysis, text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    out = []
    for f in analysis.findings:
        first = max(1, f.line - 1)
        source = [(n, lines[n - 1]) for n in range(first, min(len(lines), f.line + 1) + 1) if 0 < n <= len(lines)]
        out.append({"rule": f.rule, "slug": f.slug, "severity": f.severity, "message": f.message, "line": f.line,
                    "col": f.col, "path": f.path, "fix": f.hint, "waived": f.waived,
                    "waiver_reason": f.waiver_reason, "source": source})
    return out


def _verdict(analysis: Analysis) -> dict[str, Any]:
    """Pass, pass with warnings, or fail: what a reader needs before any figure, with the top findings."""
    active = [f for f in analysis.findings if not f.waived]
    counts = {sev: sum(f.severity == sev for f in active) for sev in ("error", "warning", "info")}
    status = "fail" if counts["error"] else "warnings" if counts["warning"] else "pass"
    words = {"fail": "Fails its rules", "warnings": "Passes, with warnings", "pass": "Passes every rule"}[status]
    order = {"error": 0, "warning": 1, "info": 2}
    top = sorted((f for f in active if f.severity != "info"), key=lambda f: (order[f.severity], f.line))[:3]
    return {"status": status, "title": words, "counts": counts,
            "waived": sum(f.waived for f in analysis.findings),
            "top": [{"rule": f.rule, "severity": f.severity, "line": f.line, "message": f.message} for f in top]}


def _estimate(estimate: dict[str, Any]) -> dict[str, Any]:
    """The estimate in words and units: the headline figures of its kind, then every figure, labelled."""
    from validator.emit.labels import HEADLINE, figure_rows, label, show

    skip = ("version", "name", "file", "kind", "trust", "valid", "blocked_by")
    rows = figure_rows({k: v for k, v in estimate.items() if k not in skip})
    trust = estimate.get("trust") or {}
    for r in rows:          # the likely range of a figure where the estimator gives one (its held-out error)
        low_high = (trust.get("intervals") or {}).get(r["key"])
        r["interval"] = None if not low_high else f"{show(low_high[0], label(r['key'])[1])} to " \
                                                   f"{show(low_high[1], label(r['key'])[1])}"
    by_key = {r["key"]: r for r in rows}
    head = [by_key[k] for k in HEADLINE.get(estimate["kind"], ()) if k in by_key]
    return {"headline": head, "rows": rows, "uncertainty_pct": estimate.get("uncertainty_pct"),
            "basis": trust.get("basis"), "outside_fit": trust.get("outside_fit") or [],
            "valid": estimate.get("valid", True), "blocked_by": estimate.get("blocked_by") or []}


def _diff(design: Path, base: str, run: RunConfig) -> dict[str, Any]:
    from validator.workflows.diff import compare, git_diffs
    from validator.workflows.diff_report import metric_rows

    display = display_name(design)
    if Path(base).is_file():
        diffs = [compare(Path(base), design, display, run)]
        label = display_name(Path(base))
    else:
        diffs = [d for d in git_diffs(base, [design], run) if d.file == display]
        label = f"{display} at {base}"
    if not diffs:
        return {"base": label, "status": "unchanged", "rows": [], "new": [], "fixed": [], "note": None}
    d = diffs[0]
    return {"base": label, "status": d.status, "rows": [r for r in metric_rows(d) if r[3] not in ("", "=")],
            "new": [{"rule": f.rule, "severity": f.severity, "line": f.line, "message": f.message}
                    for f in d.new_findings],
            "fixed": [{"rule": f.rule, "message": f.message} for f in d.fixed_findings],
            "note": d.unpriced_note()}


def _picture(analysis: Analysis) -> dict[str, str]:
    from validator.emit.overview import build_overview, overview_dot
    from validator.emit.svg import inline_svg, render_svg

    assert analysis.topology is not None
    try:
        # left to right: tiers side by side and the groups of a tier stacked, so the picture fits a page's width
        dot = overview_dot(build_overview(analysis.topology), direction="LR")
        return {"svg": inline_svg(render_svg(dot)), "error": ""}
    except ToolError as exc:
        return {"svg": "", "error": str(exc)}


def _racks(derived: Derived) -> dict[str, Any]:
    """The rack elevations of `clusterplan racks`, each distinct rack once with the racks like it."""
    from validator.derive.elevation import elevations
    from validator.emit.racks import distinct_racks, rack_spans

    elev = elevations(derived)
    distinct = [{**_dump(first), "same_as": rack_spans([first, *same]) if same else "", "count": len(same) + 1}
                for first, same in distinct_racks(elev)]
    return {"total": elev.racks_total, "ru_used": elev.ru_used_total, "power_total_kw": elev.power_total_kw,
            "power_known_kw": elev.power_known_kw, "basis": elev.power_basis, "distinct": distinct}


def _dump(rack: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    data: dict[str, Any] = TypeAdapter(type(rack)).dump_python(rack, mode="json")
    return data


def build_report(design: Path, analysis: Analysis, run: RunConfig, base: str | None = None) -> str:
    from validator import __version__
    from validator.derive.failures import analyze_failures
    from validator.emit.failures import failures_json
    from validator.emit.html import render_page

    topo, derived = analysis.topology, analysis.derived
    assert topo is not None and derived is not None
    try:
        text = design.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ToolError(f"{design}: {exc.strerror or exc}") from None
    bom = derived.bom.as_dict()
    estimate = derived.estimate.as_dict()
    page = {
        "tool": {"name": "clusterplan", "version": __version__},
        "design": {"name": topo.resolved.design.metadata.name, "file": analysis.file, "kind": estimate["kind"],
                   "gpus": topo.gpus, "gpu": topo.resolved.gpu.id, "servers": topo.servers,
                   "server": topo.resolved.server.id, "description": topo.resolved.design.metadata.description},
        "verdict": _verdict(analysis),
        "findings": _findings(analysis, text),
        "estimate": _estimate(estimate),
        "bom": bom,
        "failures": failures_json(analyze_failures(topo, derived)),
        "picture": _picture(analysis),
        "racks": _racks(derived),
        "diff": _diff(design, base, run) if base else None,
    }
    return render_page(page)
