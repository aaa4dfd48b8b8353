"""`clusterplan dcim`: hand a validated design to the source of truth (Nautobot; docs/dcim.md).

    clusterplan dcim export DESIGN            the objects, in Nautobot's data model, as JSON (no server)
    clusterplan dcim sync DESIGN              the plan: creates, updates, deletes (reads the server, writes nothing)
    clusterplan dcim sync DESIGN --apply      carry the plan out, then read back and check nothing is left
    clusterplan dcim diff DESIGN              drift between the live DCIM and the design; exit 1 when any

The server and its token come from the environment (NAUTOBOT_URL, NAUTOBOT_TOKEN), never from a design; TLS
is verified unless --insecure says otherwise. A design with error findings is not synced (--force to).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from validator.commands.common import (
    ConfigOption,
    Fmt,
    analysis_or_exit,
    dump_json,
    emit,
    fail,
    gate_errors,
    run_config,
)

if TYPE_CHECKING:
    from validator.emit.dcim import DcimObjects
    from validator.workflows.dcim_nautobot import Nautobot

dcim_app = typer.Typer(no_args_is_help=True, help="Export and sync the design to a DCIM / source of truth "
                       "(Nautobot): locations, racks, devices, interfaces, cables, power.")

DesignArg = Annotated[Path, typer.Argument(help="A design file.")]
InsecureOption = Annotated[bool, typer.Option("--insecure", help="Do not verify the server's TLS certificate "
                                              "(a test server only).")]


def _objects(design: Path, config: Path | None, force: bool = True) -> DcimObjects:
    from validator.emit.dcim import dcim_objects

    analysis = analysis_or_exit(design, run_config(config))
    if not force:
        gate_errors(design, analysis, force)
    assert analysis.derived is not None
    return dcim_objects(analysis.derived)


def _server(insecure: bool) -> Nautobot:
    from validator.workflows.dcim_nautobot import Nautobot

    url, token = os.environ.get("NAUTOBOT_URL"), os.environ.get("NAUTOBOT_TOKEN")
    if not url or not token:
        fail("set NAUTOBOT_URL and NAUTOBOT_TOKEN in the environment (the token is never read from a design)")
    return Nautobot(url, token, verify_tls=not insecure)


@dcim_app.command("export")
def export(design: DesignArg, output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to FILE.")]
           = None, config: ConfigOption = None) -> None:
    """The design's DCIM objects as JSON (schemas/dcim.schema.json): no server needed."""
    emit(dump_json(_objects(design, config).as_dict()), output)


@dcim_app.command("sync")
def sync(design: DesignArg, apply: Annotated[bool, typer.Option("--apply", help="Write the plan to the DCIM "
                                                                "(without it: a dry run).")] = False,
         fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
         force: Annotated[bool, typer.Option("--force", help="Sync a design that has error findings.")] = False,
         insecure: InsecureOption = False, config: ConfigOption = None) -> None:
    """Plan the changes that make the DCIM hold the design; with --apply, make them and check by reading back."""
    from validator.workflows.dcim import apply as apply_plan
    from validator.workflows.dcim import plan

    wanted = _objects(design, config, force)
    server = _server(insecure)
    p = plan(wanted, server)
    sys.stdout.write(dump_json(p.as_dict()) if fmt == Fmt.json else p.text())
    if p.empty:
        if apply:
            sys.stderr.write("no change to apply; read back: the DCIM holds the design\n")
        return
    if not apply:
        sys.stderr.write("dry run: nothing written (--apply writes it)\n")
        return
    def say(message: str) -> None:
        sys.stderr.write(f"  {message}\n")

    apply_plan(p, server, say)
    left = plan(wanted, _server(insecure))
    if not left.empty:
        fail(f"after --apply the DCIM still differs from the design in {len(left.changes)} objects", 1)
    sys.stderr.write(f"applied {len(p.changes)} changes; read back: the DCIM holds the design\n")


@dcim_app.command("diff")
def diff(design: DesignArg, insecure: InsecureOption = False, config: ConfigOption = None) -> None:
    """Drift: what the live DCIM holds that the design does not say (a moved device, a cable patched
    elsewhere), and what it lacks. Exit 1 when there is any."""
    from validator.workflows.dcim import drift

    lines = drift(_objects(design, config), _server(insecure))
    sys.stdout.write("".join(f"{line}\n" for line in lines) or "no drift: the DCIM holds the design\n")
    if lines:
        raise typer.Exit(1)
