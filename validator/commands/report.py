"""`clusterplan report`: one self-contained HTML page about a design."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from validator.base.errors import ToolError
from validator.commands.common import (
    ConfigOption,
    PricesOption,
    QuietOption,
    analysis_or_exit,
    begin_progress,
    emit,
    fail,
    run_config,
)


def report(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")],
    base: Annotated[str | None, typer.Option("--base", help="Compare with this design file, or with the design "
                                             "as of this git ref (branch, tag, commit).")] = None,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """One self-contained HTML page (no network): findings with source lines and fixes, the estimate, the BOM
    with cost and power, failure domains, the topology picture and, given --base, the diff."""
    begin_progress(quiet)
    from validator.workflows.html_report import build_report

    run = run_config(config, prices)
    analysis = analysis_or_exit(design, run)
    try:
        page = build_report(design, analysis, run, base)
    except ToolError as exc:
        fail(str(exc))
    emit(page, output)
