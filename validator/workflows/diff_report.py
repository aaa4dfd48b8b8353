"""`clusterplan diff` output: text, Markdown for a PR comment (kept under GitHub's comment size), JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from validator.emit.escape import known, markdown_code, markdown_text, visible
from validator.workflows.diff import METRICS, DesignDiff

MARKDOWN_LIMIT = 60_000
HEADLINE = ("gpus", "switches", "it_kw", "capex", "capex_low", "capex_high", "mfu", "tokens_per_s",
            "output_tokens_per_s_per_gpu", "replicas_needed", "prefill_replicas_needed", "cost_per_million_tokens",
            "ttft_ms", "tpot_ms", "max_concurrency")


def _fmt(metric: str, value: float | None) -> str:
    if known(value) is None:      # unknown, or not finite (an overflowing price): never `$inf`
        return "n/a"
    assert value is not None
    kind = METRICS.get(metric, ("", "", "count"))[2]
    if kind == "ratio":
        return f"{value * 100:.1f}%"
    if metric in ("capex", "capex_low", "capex_high", "growth_usd"):
        return f"${value:,.0f}"
    if metric == "gpu_hour_usd":
        return f"${value:,.2f}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"


def _change(d: DesignDiff, metric: str) -> str:
    absolute, relative = d.delta(metric)
    if absolute is None:
        return ""
    if absolute == 0:
        return "="
    kind = METRICS.get(metric, ("", "", "count"))[2]
    if kind == "ratio":
        return f"{absolute * 100:+.1f}pt"
    rel = f" ({relative * 100:+.1f}%)" if relative is not None else ""
    sign = "+" if absolute > 0 else "-"
    return f"{sign}{_fmt(metric, abs(absolute))}{rel}"


def _likely(d: DesignDiff, metric: str) -> str:
    """The head's interval (the base's for a removed design), as the estimate prints it."""
    band = d.interval(d.head or d.base, metric)
    return "" if band is None else f"  (likely {_fmt(metric, band[0])}-{_fmt(metric, band[1])})"


def _label(metric: str) -> str:
    label, unit, _ = METRICS.get(metric, (metric, "", ""))
    return f"{label} ({unit})" if unit and unit != "USD" else label


def _metrics(d: DesignDiff) -> list[str]:
    keys = set(d.base.metrics if d.base else {}) | set(d.head.metrics if d.head else {})
    ordered = [m for m in METRICS if m in keys] + sorted(k for k in keys if k not in METRICS)
    return ordered


def metric_rows(d: DesignDiff) -> list[tuple[str, str, str, str]]:
    """(label, base, head, change) of every metric of one design's diff, formatted as the text report does."""
    return [(_label(m), _fmt(m, d.value(d.base, m)), _fmt(m, d.value(d.head, m)), _change(d, m)) for m in _metrics(d)]


def diff_json(diffs: Sequence[DesignDiff], tripped: Sequence[str], weakened: Sequence[str] = ()) -> str:
    out: list[dict[str, Any]] = []
    for d in diffs:
        out.append({
            "file": d.file, "status": d.status,
            "metrics": {m: {"base": d.value(d.base, m), "head": d.value(d.head, m), "change": d.delta(m)[0],
                            "relative": d.delta(m)[1],
                            **({"base_interval": list(i)} if (i := d.interval(d.base, m)) else {}),
                            **({"head_interval": list(i)} if (i := d.interval(d.head, m)) else {})}
                        for m in _metrics(d)},
            "new_findings": [{"rule": f.rule, "message": f.message, "line": f.line} for f in d.new_findings],
            "fixed_findings": [{"rule": f.rule, "message": f.message} for f in d.fixed_findings],
            "unpriced_note": d.unpriced_note(),
        })
    from validator.emit.escape import to_json

    return to_json({"version": 1, "designs": out, "gates_tripped": list(tripped), "config_weakened": list(weakened)},
                   ensure_ascii=True) + "\n"


def diff_text(diffs: Sequence[DesignDiff], tripped: Sequence[str], weakened: Sequence[str] = ()) -> str:
    lines = [f"config weakened: {visible(w)}" for w in weakened]
    unchanged = [d for d in diffs if d.status == "unchanged"]
    for d in diffs:
        if d.status == "unchanged":
            continue
        lines.append(f"{visible(d.file)} ({d.status})")
        for m in _metrics(d):
            change = _change(d, m)
            known = (d.value(d.base, m) is None) != (d.value(d.head, m) is None)    # e.g. latency now overloaded
            if (change and change != "=") or known or d.status != "changed":
                before, after = _fmt(m, d.value(d.base, m)), _fmt(m, d.value(d.head, m))
                lines.append(f"  {_label(m):<30} {before:>14} -> {after:>14}  {change}{_likely(d, m)}")
        if note := d.unpriced_note():
            lines.append(f"  ! {visible(note)}")
        for f in d.new_findings:
            lines.append(f"  + {f.severity} {f.rule} line {f.line}: {visible(f.message)}")
        for f in d.fixed_findings:
            lines.append(f"  - fixed {f.rule}: {visible(f.message)}")
    if unchanged:
        lines.append(f"{len(unchanged)} design(s) unchanged")
    lines += [f"gate tripped: {visible(t)}" for t in tripped]
    head, body = lines[:len(weakened)], lines[len(weakened):]
    return "\n".join([*head, *(body or ["no design changed"])]) + "\n"


def diff_markdown(diffs: Sequence[DesignDiff], tripped: Sequence[str], weakened: Sequence[str] = ()) -> str:
    changed = [d for d in diffs if d.status != "unchanged"]
    unchanged = len(diffs) - len(changed)
    out = ["## clusterplan: design changes", ""]
    if tripped:
        out += ["**Gates tripped:**", *[f"- {markdown_text(t)}" for t in tripped], ""]
    if weakened:
        out += ["**Repository configuration weakened** (rules turned off, severities lowered, waivers added):",
                *[f"- :warning: {markdown_text(w)}" for w in weakened], ""]
    if not changed:
        out.append(f"No design changed ({unchanged} unchanged).")
        return "\n".join(out) + "\n"
    cols = [m for m in HEADLINE if any(d.value(d.head, m) is not None or d.value(d.base, m) is not None
                                       for d in changed)]
    out.append("| design | status | " + " | ".join(_label(m) for m in cols) + " | findings |")
    out.append("|---|---|" + "---|" * len(cols) + "---|")
    for d in changed:
        cells = [(_change(d, m) or _fmt(m, d.value(d.head, m))) if d.status == "changed" else
                 _fmt(m, d.value(d.head or d.base, m)) for m in cols]
        findings = f"+{len(d.new_findings)} / -{len(d.fixed_findings)}"
        out.append(f"| `{markdown_code(d.file)}` | {d.status} | " + " | ".join(cells) + f" | {findings} |")
    notes = [f"- `{markdown_code(d.file)}`: {markdown_text(note)}" for d in changed if (note := d.unpriced_note())]
    if notes:
        out += ["", "**Unpriced BOM lines** (capex leaves them out):", *notes]
    if unchanged:
        out += ["", f"{unchanged} design(s) unchanged."]
    details: list[str] = []
    for d in changed:
        rows = ["| metric | base | head | change |", "|---|---|---|---|"]
        rows += [f"| {_label(m)} | {_fmt(m, d.value(d.base, m))} | "
                 f"{_fmt(m, d.value(d.head, m))}{_likely(d, m)} | {_change(d, m)} |" for m in _metrics(d)]
        rows += [f"- new {f.severity} `{f.rule}` (line {f.line}): {markdown_text(f.message)}" for f in d.new_findings]
        rows += [f"- fixed `{f.rule}`: {markdown_text(f.message)}" for f in d.fixed_findings]
        details += ["", f"<details><summary>{markdown_text(d.file)}</summary>", "", *rows, "", "</details>"]
    text = "\n".join(out + details) + "\n"
    if len(text) > MARKDOWN_LIMIT:
        note = "\n\n_Details truncated to stay under the comment size limit; run `clusterplan diff` locally._\n"
        text = "\n".join(out) + note
    return text
