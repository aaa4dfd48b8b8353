"""`clusterplan topology`: the design as a picture: DOT for NVIDIA Air and Graphviz, an SVG overview, JSON."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from validator.base.errors import ToolError
from validator.commands.common import ConfigOption, QuietOption, analysis_or_exit, begin_progress, fail, run_config

if TYPE_CHECKING:
    from validator.expand.topology import Topology

DEVICE_SVG_LIMIT = 400     # devices Graphviz lays out in seconds; beyond it the overview is the readable picture


class TopoFmt(StrEnum):
    dot = "dot"
    svg = "svg"
    json = "json"


class View(StrEnum):
    devices = "devices"
    overview = "overview"


def topology(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[TopoFmt, typer.Option("--format", "-f", help="dot (NVIDIA Air / Graphviz), svg or json.")]
    = TopoFmt.dot,
    view: Annotated[View | None, typer.Option("--view", help="devices: every device and link (default for dot "
                                              "and json); overview: groups and bundles with counts (default "
                                              "for svg).")] = None,
    fabric: Annotated[list[str] | None, typer.Option("--fabric", help="Only this fabric (repeatable): compute, "
                                                     "storage, inband, oob.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
    config: ConfigOption = None,
    quiet: QuietOption = False,
) -> None:
    """Draw the topology: a DOT file NVIDIA Air and Graphviz import (one node per device, one edge per link,
    with ports), an SVG overview that stays readable at 100k GPUs, or JSON nodes and links."""
    begin_progress(quiet)
    from validator.emit.files import write_atomic_lines

    analysis = analysis_or_exit(design, run_config(config))
    topo = analysis.topology
    assert topo is not None
    unknown = sorted(set(fabric or []) - set(topo.fabrics))
    if unknown:
        fail(f"no fabric {', '.join(unknown)} in this design (it has {', '.join(topo.fabrics)})")
    view = view or (View.overview if fmt == TopoFmt.svg else View.devices)
    try:
        chunks = _render(topo, fmt, view, fabric)
    except ToolError as exc:
        fail(str(exc))
    if output is not None:
        write_atomic_lines(output, chunks)
    else:
        for chunk in chunks:
            sys.stdout.write(chunk)


def _render(topo: Topology, fmt: TopoFmt, view: View, fabric: list[str] | None) -> Iterable[str]:
    from validator.emit import overview as ov
    from validator.emit import topology_dot as td
    from validator.emit.svg import render_svg

    if view == View.overview:
        picture = ov.build_overview(topo, fabric)
        if fmt == TopoFmt.json:
            return [ov.overview_json(picture)]
        text = ov.overview_dot(picture)
        return [render_svg(text)] if fmt == TopoFmt.svg else [text]
    if fmt == TopoFmt.json:
        return td.device_json(topo, fabric)
    if fmt == TopoFmt.svg:
        devices = sum(1 for _ in td.DeviceGraph(topo, fabric).nodes())
        if devices > DEVICE_SVG_LIMIT:
            raise ToolError(f"{devices:,} devices are too many to lay out one by one (limit {DEVICE_SVG_LIMIT}); "
                            "draw the overview (--view overview), or write --format dot and lay it out yourself")
        return [render_svg("".join(td.device_dot(topo, fabric)))]
    return td.device_dot(topo, fabric)
