"""`clusterplan describe` and `clusterplan estimate`: what a design resolves to and how fast it runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from validator.commands.common import (
    ConfigOption,
    Fmt,
    PricesOption,
    QuietOption,
    analysis_or_exit,
    begin_progress,
    dump_json,
    run_config,
)


def describe(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
    config: ConfigOption = None,
    quiet: QuietOption = False,
) -> None:
    """Show what a design resolves to: GPUs, servers, racks, NVLink domains, fabric tiers, IT power."""
    begin_progress(quiet)
    from validator.emit.describe import describe as facts_of
    from validator.emit.describe import describe_text
    from validator.emit.escape import terminal_text

    analysis = analysis_or_exit(design, run_config(config))
    assert analysis.topology is not None
    facts = facts_of(analysis.topology, analysis.derived)
    sys.stdout.write(terminal_text(dump_json(facts) if fmt == Fmt.json else describe_text(facts)))


def estimate(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Estimate performance: training step time, MFU, time-to-train; inference TTFT, TPOT, concurrency, cost."""
    begin_progress(quiet)
    from validator.emit.escape import terminal_text
    from validator.emit.scorecard import scorecard, validity

    analysis = analysis_or_exit(design, run_config(config, prices))
    derived = analysis.derived
    assert derived is not None
    result = {**derived.estimate.as_dict(), **validity(analysis.findings)}
    sys.stdout.write(terminal_text(dump_json(result) if fmt == Fmt.json else scorecard(result)))
