"""`clusterplan size` and `clusterplan sweep`: plan a cluster from a workload, and sweep what-ifs over a design."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from validator.base.errors import ToolError
from validator.commands.common import (
    ConfigOption,
    PricesOption,
    QuietOption,
    begin_progress,
    dump_json,
    emit,
    fail,
    run_config,
)


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
    quiet: QuietOption = False,
) -> None:
    """What-ifs: every point of a grid of design changes validated, estimated and costed, one row each."""
    begin_progress(quiet)
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
                           progress=lambda rows, total: progress(rows, total, "sweep (points)"))
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


class SizeFmt(StrEnum):
    text = "text"
    json = "json"


def size(
    request: Annotated[Path, typer.Argument(help="A sizing request (schemas/clusterplan-sizing.schema.json).")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Directory to write the best design of "
                                                "each objective into (NAME-smallest.yaml, -capex, -tco, "
                                                "-fastest).")] = None,
    fmt: Annotated[SizeFmt, typer.Option("--format", "-f", help="Output format.")] = SizeFmt.text,
    servers: Annotated[list[str] | None, typer.Option("--server", help="Allowed server (repeatable); replaces "
                                                      "constraints.servers.")] = None,
    max_gpus: Annotated[int | None, typer.Option("--max-gpus", min=1, help="GPU budget; replaces "
                                                 "constraints.max_gpus.")] = None,
    budget_usd: Annotated[float | None, typer.Option("--budget-usd", min=1, help="Capex limit; replaces "
                                                     "constraints.budget_usd.")] = None,
    deadline_days: Annotated[float | None, typer.Option("--deadline-days", min=0.001, help="Training deadline; "
                                                        "replaces training.deadline_days.")] = None,
    qps: Annotated[float | None, typer.Option("--qps", min=0.000001, help="Inference load in requests/s; "
                                              "replaces inference.targets.qps.")] = None,
    top: Annotated[int | None, typer.Option("--top", min=1, max=20, help="Designs shown per objective.")] = None,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Size a cluster: the smallest, cheapest (capex, TCO) and fastest designs that meet a workload's deadline or
    SLOs, searched exhaustively and checked by the rules; writes them as design files."""
    begin_progress(quiet)
    from validator.emit.sizing import size_text
    from validator.workflows.size_rank import result_dict, run_size
    from validator.workflows.size_request import load_request, override, write_designs

    run = run_config(config, prices)
    try:
        req, catalog = load_request(request)
        req = override(req, servers=servers, max_gpus=max_gpus, budget_usd=budget_usd, deadline_days=deadline_days,
                       qps=qps, top=top)
        result = run_size(req, request, run, catalog)
        written = write_designs(result, output) if output is not None else {}
    except ToolError as exc:
        fail(str(exc))
    data = result_dict(result, written)
    emit(dump_json(data) if fmt == SizeFmt.json else size_text(data), None)
    raise typer.Exit(0 if data["designs"] else 1)
