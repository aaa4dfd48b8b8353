"""`clusterplan failures`: what the failure of one part of each class costs, spares, single points of failure."""

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


def failures(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Failure domains: for each class of component (switch tiers, links, servers, NVLink domains, racks,
    PDUs, CDUs, storage nodes), what one failure costs (bandwidth per tier, GPUs unreachable, the training
    job or the inference replicas), spares to stock, and single points of failure."""
    begin_progress(quiet)
    from validator.derive.failures import analyze_failures
    from validator.emit.failures import failures_json, failures_text

    analysis = analysis_or_exit(design, run_config(config, prices))
    assert analysis.topology is not None and analysis.derived is not None
    result = analyze_failures(analysis.topology, analysis.derived)
    sys.stdout.write(dump_json(failures_json(result)) if fmt == Fmt.json else failures_text(result))
