"""`clusterplan bom`, `cabling` and `render`: the outputs a design is built from."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from validator.base.errors import ToolError
from validator.commands.common import ConfigOption, analysis_or_exit, emit, fail, gate_errors, run_config


class BomFmt(StrEnum):
    text = "text"
    md = "md"
    csv = "csv"
    json = "json"
    xlsx = "xlsx"


class CablingFmt(StrEnum):
    csv = "csv"
    json = "json"
    xlsx = "xlsx"


def _workbook(design: Path, analysis: Any, timestamp: str | None) -> bytes:
    from validator.emit.workbook import build_workbook

    try:
        return build_workbook(design, analysis, timestamp)
    except ValueError:
        fail(f"--timestamp {timestamp!r}: expected an ISO date such as 2026-12-01T00:00:00")


def bom(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[BomFmt, typer.Option("--format", "-f", help="Output format.")] = BomFmt.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO); default: the design's last "
                                                  "git commit, or SOURCE_DATE_EPOCH.")] = None,
    config: ConfigOption = None,
) -> None:
    """Bill of materials: servers, GPUs, NICs, switches, optics, cables, racks, PDUs, cooling; power and cost."""
    from validator.emit import tables

    analysis = analysis_or_exit(design, run_config(config))
    if fmt == BomFmt.xlsx:
        emit(_workbook(design, analysis, timestamp), output)
        return
    result = analysis.facts.bom
    text = {BomFmt.text: lambda: tables.bom_text(result), BomFmt.md: lambda: tables.bom_text(result, markdown=True),
            BomFmt.csv: lambda: tables.bom_csv(result), BomFmt.json: lambda: tables.bom_json(result)}[fmt]()
    emit(text, output)


def cabling(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[CablingFmt, typer.Option("--format", "-f", help="Output format.")] = CablingFmt.csv,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO), for --format xlsx.")] = None,
    config: ConfigOption = None,
) -> None:
    """Cabling plan: one row per link, A end to Z end, with racks, media, transceivers and length."""
    from validator.emit import tables
    from validator.emit.files import write_atomic_lines

    analysis = analysis_or_exit(design, run_config(config))
    if fmt == CablingFmt.xlsx:
        emit(_workbook(design, analysis, timestamp), output)
        return
    plan = analysis.facts.cabling
    if fmt == CablingFmt.json:
        emit(tables.cabling_json(plan), output)
    elif output is not None:
        write_atomic_lines(output, tables.cabling_csv_rows(plan))
    else:
        for line in tables.cabling_csv_rows(plan):
            sys.stdout.write(line)


def render(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write into (replaced as one set; "
                                         "files clusterplan did not write stay).")],
    force: Annotated[bool, typer.Option("--force", help="Write even for a design with error findings "
                                        "(and say so).")] = False,
    config: ConfigOption = None,
) -> None:
    """Write switch configuration skeletons (SONiC, EOS, NVUE, OpenSM), the BOM and the cabling plan.

    Nothing is written for a design with error findings (exit 1) unless --force."""
    from validator.emit.render import TemplateError, render_all, user_templates

    analysis = analysis_or_exit(design, run_config(config))
    errors = gate_errors(design, analysis, force)
    assert analysis.resolved is not None
    try:
        written = render_all(analysis, output, user_templates(design, analysis.resolved.design.templates))
    except TemplateError as exc:
        fail(str(exc), 1)
    except ToolError as exc:
        fail(str(exc))
    forced = f" despite {errors} error finding{'s' * (errors != 1)} (--force)" if errors else ""
    sys.stderr.write(f"wrote {len(written)} files under {output}{forced}\n")
