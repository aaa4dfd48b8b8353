"""`clusterplan bom`, `cabling` and `render`: the outputs a design is built from."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

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
    gate_errors,
    run_config,
)


class BomFmt(StrEnum):
    text = "text"
    md = "md"
    csv = "csv"
    json = "json"
    xlsx = "xlsx"
    procurement = "procurement"
    power = "power"
    rfq = "rfq"


class RacksFmt(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"
    ports = "ports"


class CablingFmt(StrEnum):
    csv = "csv"
    json = "json"
    xlsx = "xlsx"
    labels = "labels"


def _workbook(design: Path, analysis: Any, timestamp: str | None, kind: str) -> bytes:
    from validator.emit.workbook import build_workbook

    try:
        return build_workbook(design, analysis, timestamp, kind)
    except ValueError:
        fail(f"--timestamp {timestamp!r}: expected an ISO date such as 2026-12-01T00:00:00")


def bom(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[BomFmt, typer.Option("--format", "-f", help="Output format: text, md, csv, json, xlsx, "
                                        "procurement (CSV to order from), power (power and cooling summary), "
                                        "rfq (one request for quotation per vendor; -o: a directory).")]
    = BomFmt.text,
    template: Annotated[str | None, typer.Option("--template", "-t", help="Render this BOM template instead "
                                                 "(bom/NAME.j2 in the design's templates: directory, or built in).")]
    = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO); default: the design's last "
                                                  "git commit, or SOURCE_DATE_EPOCH.")] = None,
    config: ConfigOption = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
) -> None:
    """Bill of materials: servers, GPUs, NICs, switches, optics, cables, racks, PDUs, cooling; power and cost."""
    begin_progress(quiet)
    from validator.emit import tables
    from validator.emit.render import TemplateError, user_templates
    from validator.emit.render.bom import render_bom, rfq_documents, vendor_of

    analysis = analysis_or_exit(design, run_config(config, prices))
    if fmt == BomFmt.xlsx and template is None:
        emit(_workbook(design, analysis, timestamp, "bom"), output)
        return
    result = analysis.facts.bom
    assert analysis.topology is not None
    vendors = vendor_of(analysis.topology.resolved.catalog, result)
    try:
        user = user_templates(design, analysis.topology.resolved.design.templates)
        if template is not None or fmt in (BomFmt.text, BomFmt.md, BomFmt.procurement, BomFmt.power):
            emit(render_bom(template or fmt.value, result, user, vendor_of=vendors), output)
        elif fmt == BomFmt.rfq:
            _emit_rfq(rfq_documents(result, vendors, user), output)
        else:
            emit(tables.bom_csv(result) if fmt == BomFmt.csv else tables.bom_json(result), output)
    except TemplateError as exc:
        fail(str(exc), 1)


def _emit_rfq(documents: dict[str, str], output: Path | None) -> None:
    from validator.emit.files import write_atomic

    if output is None:
        from validator.emit.escape import terminal_text

        sys.stdout.write(terminal_text("\n".join(documents.values())))
        return
    for name, text in documents.items():
        write_atomic(output / name, text)
    sys.stderr.write(f"wrote {len(documents)} requests for quotation under {output}\n")


def cabling(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[CablingFmt, typer.Option("--format", "-f", help="Output format: csv, json, xlsx, labels "
                                            "(the label sheet: one CSV row per cable, its id and both ends' "
                                            "device:port).")] = CablingFmt.csv,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO), for --format xlsx.")] = None,
    rack: Annotated[str | None, typer.Option(help="Only links with an end in this rack (e.g. R01-09).")] = None,
    switch: Annotated[str | None, typer.Option(help="Only links with an end at this device "
                                               "(e.g. compute-leaf-su001-rail1).")] = None,
    config: ConfigOption = None,
    quiet: QuietOption = False,
) -> None:
    """Cabling plan: one row per link, A end to Z end, with racks, media, transceivers and length, the
    interface name of each end in its OS's syntax (as the configurations name it) and the cable id
    printed on both ends; --rack and --switch keep the rows one technician patches."""
    begin_progress(quiet)
    from validator.emit import tables
    from validator.emit.files import write_atomic_lines

    analysis = analysis_or_exit(design, run_config(config))
    if fmt == CablingFmt.xlsx:
        emit(_workbook(design, analysis, timestamp, "cabling"), output)
        return
    plan = analysis.facts.cabling
    keep = tables.cabling_filter(rack, switch) if rack is not None or switch is not None else None
    if fmt == CablingFmt.json:
        emit(tables.cabling_json(plan, keep), output)
        return
    if fmt == CablingFmt.labels:
        from validator.emit.cable_labels import labels_csv_rows

        lines = labels_csv_rows(plan, keep)
    else:
        lines = tables.cabling_csv_rows(plan, keep)
    if output is not None:
        write_atomic_lines(output, lines)
    else:
        for line in lines:
            sys.stdout.write(line)


def racks(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[RacksFmt, typer.Option("--format", "-f", help="Output format: text, json, csv, ports (each "
                                          "device's cabled ports: interface, far end, cable id).")]
    = RacksFmt.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    config: ConfigOption = None,
    quiet: QuietOption = False,
) -> None:
    """Rack elevations: every rack's place, what stands in each rack unit, its power, weight and cooling."""
    begin_progress(quiet)
    from validator.derive.elevation import elevations
    from validator.emit import racks as views

    analysis = analysis_or_exit(design, run_config(config))
    elev = elevations(analysis.facts)
    if fmt == RacksFmt.ports:
        from validator.emit.cable_labels import ports_text

        emit(ports_text(elev, analysis.facts.cabling), output)
        return
    emit({RacksFmt.text: views.racks_text, RacksFmt.json: views.racks_json, RacksFmt.csv: views.racks_csv}[fmt](elev),
         output)


def render(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write into (replaced as one set; "
                                         "files clusterplan did not write stay).")],
    force: Annotated[bool, typer.Option("--force", help="Write even for a design with error findings "
                                        "(and say so).")] = False,
    config: ConfigOption = None,
    quiet: QuietOption = False,
) -> None:
    """Write switch configuration skeletons (SONiC, EOS, NVUE, OpenSM), the BOM and the cabling plan.

    Nothing is written for a design with error findings (exit 1) unless --force."""
    begin_progress(quiet)
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
