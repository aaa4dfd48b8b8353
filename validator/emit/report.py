"""The versioned JSON report of `validate` (shape: schemas/report.schema.json)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from validator import __version__
from validator.base.findings import SEVERITY_RANK, Finding
from validator.check.result import Analysis

REPORT_VERSION = 1


def fails(analysis: Analysis, fail_on: str) -> bool:
    floor = SEVERITY_RANK[fail_on]
    return any(not f.waived and SEVERITY_RANK[f.severity] >= floor for f in analysis.findings)


def finding_json(f: Finding) -> dict[str, Any]:
    return {"rule": f.rule, "slug": f.slug, "severity": f.severity, "message": f.message, "file": f.file,
            "line": f.line, "col": f.col, "path": f.path, "hint": f.hint, "fingerprint": f.fingerprint,
            "waived": f.waived, "waiver_reason": f.waiver_reason or None}


def report_json(analyses: Sequence[Analysis], fail_on: str) -> dict[str, Any]:
    from validator.emit.text import summary_counts

    counts = summary_counts(analyses)
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "clusterplan", "version": __version__},
        "fail_on": fail_on,
        "files": [{"file": a.file, "passed": not fails(a, fail_on),
                   "findings": [finding_json(f) for f in a.findings]} for a in analyses],
        "summary": {"designs": len(analyses), "failed": sum(fails(a, fail_on) for a in analyses),
                    "errors": counts["error"], "warnings": counts["warning"], "info": counts["info"],
                    "waived": counts["waived"]},
    }
