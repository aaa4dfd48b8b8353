"""Human-readable findings: grouped by file, the offending line with a caret, a summary line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from validator.base.findings import Finding
from validator.check.result import Analysis
from validator.emit.escape import visible

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m", "dim": "\033[2m",
            "bold": "\033[1m", "green": "\033[32m"}
_RESET = "\033[0m"


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("CI"):
        return bool(os.environ.get("FORCE_COLOR"))
    return bool(os.environ.get("FORCE_COLOR")) or (hasattr(stream, "isatty") and stream.isatty())


def summary_counts(analyses: Sequence[Analysis]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0, "waived": 0}
    for a in analyses:
        for f in a.findings:
            if f.waived:
                counts["waived"] += 1
            else:
                counts[f.severity] += 1
    return counts


def render_text(analyses: Sequence[Analysis], sources: dict[str, str], *, colour: bool = False,
                skipped: int = 0, failed: Sequence[str] = ()) -> str:
    def c(kind: str, text: str) -> str:
        return f"{_COLOURS[kind]}{text}{_RESET}" if colour else text

    out: list[str] = []
    for a in analyses:
        shown = [f for f in a.findings if not f.waived]
        if not shown:
            continue
        out.append(c("bold", a.file))
        lines = sources.get(a.file, "").splitlines()
        for f in shown:   # a finding in another file (a catalog, a price book) shows no design line
            out.extend(_finding(f, lines if f.file == a.file else [], c))
        out.append("")
    counts = summary_counts(analyses)
    n = len(analyses)
    bad = len(failed)
    parts = [f"{counts['error']} error{'s' * (counts['error'] != 1)}",
             f"{counts['warning']} warning{'s' * (counts['warning'] != 1)}", f"{counts['info']} info"]
    line = f"{n} design{'s' * (n != 1)} checked: {n - bad} passed, {bad} failed; " + ", ".join(parts)
    line += f"; {counts['waived']} waived"
    if skipped:
        line += f"; {skipped} other YAML file{'s' * (skipped != 1)} skipped"
    out.append(c("green" if not bad else "error", line))
    return "\n".join(out) + "\n"


def _finding(f: Finding, lines: list[str], colour: Callable[[str, str], str]) -> list[str]:
    head = f"{f.file}:{f.line}:{f.col}: {colour(f.severity, f.severity)} {f.rule} [{f.slug}] {f.message}"
    out = [head]
    if 0 < f.line <= len(lines):
        src = visible(lines[f.line - 1].replace("\t", " "))   # the file is untrusted: no raw escapes
        out.append(f"  {f.line:>5} | {src}")
        out.append(f"        | {' ' * (f.col - 1)}{colour('dim', '^')}")
    if f.hint:
        out.append(f"        = hint: {f.hint}")
    return out


def write(text: str, stream: TextIO = sys.stdout) -> None:
    stream.write(text)
