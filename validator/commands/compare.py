"""`clusterplan diff`: what a change does to hardware, power, cost and performance, with gates."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from validator.base.errors import ToolError
from validator.commands.common import ConfigOption, PricesOption, QuietOption, begin_progress, emit, fail, run_config


class DiffFmt(StrEnum):
    text = "text"
    md = "md"
    json = "json"


def diff(
    designs: Annotated[list[Path] | None, typer.Argument(help="BASE HEAD design files, or with --git-ref the "
                                                        "paths to compare (default: the whole repository).")] = None,
    git_ref: Annotated[str | None, typer.Option("--git-ref", help="Compare every changed design with this "
                                                "ref.")] = None,
    fmt: Annotated[DiffFmt, typer.Option("--format", "-f", help="Output format.")] = DiffFmt.text,
    fail_if: Annotated[list[str] | None, typer.Option("--fail-if", help="Gate, e.g. 'capex > +10%' or "
                                                      "'mfu < -2pt' (repeatable); 'config-weakened' trips when "
                                                      ".clusterplan.yaml turns a rule off, lowers a severity or "
                                                      "adds a waiver (with --git-ref).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Change in GPUs, switches, optics, power, capex, performance and findings between two versions."""
    begin_progress(quiet)
    from validator.base.paths import display_name
    from validator.workflows import diff_report
    from validator.workflows.config_diff import GATE, config_weakened
    from validator.workflows.diff import compare, git_diffs, git_root, parse_gate

    run = run_config(config, prices)
    weak_gate = any(g.strip() == GATE for g in fail_if or [])
    weakened: list[str] = []
    try:
        gates = [parse_gate(g) for g in fail_if or [] if g.strip() != GATE]
        if git_ref:
            diffs = git_diffs(git_ref, designs or [], run)
            config_rel, weakened = config_weakened(git_ref, run, git_root())
            weakened = [f"{config_rel}: {w}" for w in weakened]
        else:
            if not designs or len(designs) != 2:
                fail("give two design files (BASE HEAD), or --git-ref REF [PATH...]")
            for p in designs:
                if not p.is_file():
                    fail(f"{p}: no such design file")
            diffs = [compare(designs[0], designs[1], display_name(designs[1]), run)]
    except ToolError as exc:
        fail(str(exc))
    tripped = [t for d in diffs for g in gates if (t := g.trips(d))]
    if weak_gate:
        tripped += [f"{w} ({GATE})" for w in weakened]
    render = {DiffFmt.text: diff_report.diff_text, DiffFmt.md: diff_report.diff_markdown,
              DiffFmt.json: diff_report.diff_json}[fmt]
    emit(render(diffs, tripped, weakened), output)
    raise typer.Exit(1 if tripped else 0)
