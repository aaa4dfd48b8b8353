"""Findings for CI systems: SARIF 2.1.0 (GitHub code scanning), JUnit XML, GitHub workflow commands."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from validator import __version__
from validator.base.findings import READ_CODES, SEVERITY_RANK, Finding
from validator.check.registry import RULES
from validator.check.result import Analysis
from validator.emit.escape import markdown_code, markdown_text
from validator.emit.rule_help import READ_FIXES, RULES_DOC, help_uri
from validator.emit.scorecard import inference_headline

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = RULES_DOC


def _rule_table() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rid, (slug, title) in sorted(READ_CODES.items()):
        rows.append({"id": rid, "name": slug, "title": title, "rationale": title, "fix": READ_FIXES[rid],
                     "severity": "error"})
    for r in RULES:
        d = r.doc
        rows.append({"id": r.id, "name": r.slug, "title": r.title,
                     "rationale": f"{d['rationale']} Source: {d['source']}", "fix": d["fix"], "severity": r.severity})
    return rows


def repo_relative(file: str, root: Path | None = None) -> str:
    """The URI GitHub expects: the path from the repository root, with forward slashes."""
    path = Path(file).resolve()
    root = root or _git_root(Path.cwd())
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return Path(file).as_posix()


def _git_root(start: Path) -> Path:
    for parent in (start.resolve(), *start.resolve().parents):
        if (parent / ".git").exists():
            return parent
    return start.resolve()


def sarif(analyses: Sequence[Analysis], root: Path | None = None) -> dict[str, Any]:
    table = _rule_table()
    index = {row["id"]: i for i, row in enumerate(table)}
    rules = [{
        "id": row["id"], "name": row["name"],
        "shortDescription": {"text": row["title"]},
        "fullDescription": {"text": row["rationale"]},
        "help": {"text": f"{row['rationale']}\nFix: {row['fix']}",
                 "markdown": f"{row['rationale']}\n\n**Fix:** {row['fix']}"},
        "helpUri": help_uri(row["id"]),
        "defaultConfiguration": {"level": _SARIF_LEVEL[row["severity"]]},
        "properties": {"tags": ["clusterplan", row["id"][:3].lower()]},
    } for row in table]
    results = []
    for a in analyses:
        for f in a.findings:
            result: dict[str, Any] = {
                "ruleId": f.rule, "ruleIndex": index.get(f.rule, 0), "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f"{f.message}" + (f" ({f.hint})" if f.hint else "")},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": repo_relative(f.file, root), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": max(1, f.line), "startColumn": max(1, f.col)}},
                    "logicalLocations": [{"fullyQualifiedName": f.path, "kind": "member"}]}],
                "partialFingerprints": {"clusterplanFingerprint/v1": f.fingerprint},
            }
            if f.waived:
                result["suppressions"] = [{"kind": "inSource", "justification": f.waiver_reason}]
            results.append(result)
    return {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "clusterplan", "version": __version__, "semanticVersion": __version__,
                                      "informationUri": INFO_URI, "rules": rules}},
                  "columnKind": "unicodeCodePoints", "results": results}],
    }


def junit(analyses: Sequence[Analysis], fail_on: str) -> str:
    """A testsuite per design, a testcase per applicable rule; findings at or above `fail_on` fail it."""
    floor = SEVERITY_RANK[fail_on]
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    suites = []
    total_tests = total_failures = 0
    for a in analyses:
        kind = a.resolved.design.kind if a.resolved else None
        rule_ids = [r.id for r in RULES if kind and r.applies(kind)] if a.resolved else []
        by_rule: dict[str, list[Finding]] = {}
        for f in a.findings:
            by_rule.setdefault(f.rule, []).append(f)
        ids = sorted(set(rule_ids) | set(by_rule))
        cases = []
        failures = 0
        for rid in ids:
            found = [f for f in by_rule.get(rid, []) if not f.waived]
            failing = [f for f in found if SEVERITY_RANK[f.severity] >= floor]
            name = quoteattr(f"{rid} {found[0].slug if found else _slug(rid)}")
            head = f'    <testcase classname={quoteattr(a.file)} name={name} file={quoteattr(a.file)}'
            if failing:
                failures += 1
                first = failing[0]
                body = "\n".join(f"{f.file}:{f.line}:{f.col}: {f.severity} {f.rule} {f.message}" for f in failing)
                cases.append(f'{head} line="{first.line}">\n      <failure message={quoteattr(first.message)} '
                             f'type={quoteattr(first.severity)}>{_escape(body)}</failure>\n    </testcase>')
            elif found:
                body = "\n".join(f"{f.file}:{f.line}: {f.severity} {f.message}" for f in found)
                cases.append(f"{head}>\n      <system-out>{_escape(body)}</system-out>\n    </testcase>")
            else:
                cases.append(f"{head}/>")
        total_tests += len(ids)
        total_failures += failures
        suites.append(f'  <testsuite name={quoteattr(a.file)} tests="{len(ids)}" failures="{failures}" errors="0">\n'
                      + "\n".join(cases) + "\n  </testsuite>")
    lines.append(f'<testsuites name="clusterplan" tests="{total_tests}" failures="{total_failures}">')
    lines += suites
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def _slug(rule_id: str) -> str:
    from validator.check.registry import rule_by_id

    rule = rule_by_id(rule_id)
    return rule.slug if rule else READ_CODES.get(rule_id, ("finding", ""))[0]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


_GH_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def github(analyses: Sequence[Analysis], root: Path | None = None, limit: int = 0) -> str:
    """GitHub Actions workflow commands, escaped as @actions/core does (data: % CR LF; properties also : ,).

    GitHub shows at most 10 error and 10 warning annotations per step; with `limit` the rest are
    counted in one notice that points at the SARIF upload and the job summary.
    """
    out = []
    shown: dict[str, int] = {}
    hidden = 0
    for a in analyses:
        for f in a.findings:
            if f.waived:
                continue
            if limit and shown.get(f.severity, 0) >= limit:
                hidden += 1
                continue
            shown[f.severity] = shown.get(f.severity, 0) + 1
            props = (f"file={_gh_prop(repo_relative(f.file, root))},line={f.line},col={f.col},"
                     f"title={_gh_prop(f'{f.rule} {f.slug}')}")
            message = f.message + (f"\n{f.hint}" if f.hint else "")
            out.append(f"::{_GH_LEVEL[f.severity]} {props}::{_gh_data(message)}")
    if hidden:
        out.append(f"::notice title=clusterplan::{hidden} more finding(s) not annotated here; the SARIF upload "
                   "(code scanning) and the job summary list them all")
    return "\n".join(out) + ("\n" if out else "")


def _headline(analysis: Analysis) -> str:
    """The design's estimate in one line, from its derived facts (never recomputed here)."""
    e = analysis.facts.estimate.as_dict()
    if e["kind"] == "training":
        days = e["time_to_train_days"]
        return (f"MFU {100 * e['mfu']:.1f}%, {e['tokens_per_s']:,.0f} tokens/s"
                + (f", {days:,.1f} days to train" if days is not None else ""))
    return inference_headline(e)


def markdown(analyses: Sequence[Analysis], fail_on: str) -> str:
    """A findings table for the job summary: every finding, grouped by design."""
    floor = SEVERITY_RANK[fail_on]
    rows = [f for a in analyses for f in a.findings if not f.waived]
    waived = sum(f.waived for a in analyses for f in a.findings)
    failed = sum(any(not f.waived and SEVERITY_RANK[f.severity] >= floor for f in a.findings) for a in analyses)
    out = ["## clusterplan: validation", "",
           f"{len(analyses)} design(s), {failed} failing at `{fail_on}`; "
           f"{sum(f.severity == 'error' for f in rows)} errors, {sum(f.severity == 'warning' for f in rows)} "
           f"warnings, {sum(f.severity == 'info' for f in rows)} info, {waived} waived.", ""]
    headlines = [(a.file, _headline(a)) for a in analyses if a.topology is not None]
    if headlines:
        out += ["| design | estimate |", "|---|---|", *[f"| `{markdown_code(f)}` | {h} |" for f, h in headlines], ""]
    if rows:
        out += ["| severity | rule | location | message |", "|---|---|---|---|"]
        out += [f"| {f.severity} | `{f.rule}` {f.slug} | `{markdown_code(f.file)}:{f.line}` | "
                f"{markdown_text(f.message)} |" for f in rows]
    return "\n".join(out) + "\n"


def workspace_root() -> Path | None:
    """GITHUB_WORKSPACE when running in Actions, else the git root of the working directory."""
    ws = os.environ.get("GITHUB_WORKSPACE")
    return Path(ws).resolve() if ws else None
