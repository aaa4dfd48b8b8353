"""`clusterplan size` and `clusterplan sweep`: plan a cluster from a workload, and sweep what-ifs over a design."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from validator.base.errors import ToolError
from validator.commands.common import ConfigOption, PricesOption, emit, fail, run_config


class SweepFmt(StrEnum):
    text = "text"
    csv = "csv"
    json = "json"
    xlsx = "xlsx"


def sweep(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    settings: Annotated[list[str], typer.Option("--set", help="PATH=V1,V2,...: a design field and the values to "
                                                "try, e.g. fabrics.compute.speed_gbps=400,800 (repeatable).")],
    zipped: Annotated[bool, typer.Option("--zip", help="Take the i-th value of every --set together instead of "
                                         "every combination.")] = False,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, max=1024, help="Worker processes (default: "
                                             "every core).")] = None,
    fmt: Annotated[SweepFmt, typer.Option("--format", "-f", help="Output format.")] = SweepFmt.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    config: ConfigOption = None,
    prices: PricesOption = None,
) -> None:
    """What-ifs: every point of a grid of design changes validated, estimated and costed, one row each."""
    from validator.emit import planning
    from validator.emit.progress import progress
    from validator.workflows.sweep import parse_setting
    from validator.workflows.sweep import sweep as run_sweep

    if not design.is_file():
        fail(f"{design}: no such design file")
    run = run_config(config, prices)
    try:
        parsed = [parse_setting(s) for s in settings]
        result = run_sweep(design, parsed, zipped=zipped, jobs=jobs, run=run,
                           progress=lambda rows, total: progress(rows, total, "sweep", min_total=2))
    except ToolError as exc:
        fail(str(exc))
    names = [s.text for s in parsed]
    if fmt == SweepFmt.xlsx:
        emit(planning.sweep_xlsx(result.kind, names, result.rows), output)
    elif fmt == SweepFmt.csv:
        emit(planning.sweep_csv(result.kind, names, result.rows), output)
    elif fmt == SweepFmt.json:
        emit(planning.sweep_json(result.design, result.kind, names, result.rows, zipped), output)
    else:
        emit(planning.sweep_text(result.design, result.kind, names, result.rows, zipped), output)
