"""The `clusterplan` command: a thin layer over validator.pipeline, validator.workflows and the emit
modules, one module per command group. Commands are registered here, explicitly, in the order
`clusterplan --help` lists them.

Exit codes: 0 valid, 1 findings at or above the failure level, 2 usage or tool error.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Collection
from functools import cache
from typing import Annotated

import typer

from validator import __version__
from validator.base.errors import ToolError
from validator.commands import build, check, compare, dcim, failures, inspect, plan, reference, report, topology

COMMANDS = (check.validate, inspect.describe, inspect.estimate, build.bom, build.cabling, build.racks, build.render,
            compare.diff, plan.size, plan.sweep, check.outputs, failures.failures, topology.topology, report.report,
            reference.schema, reference.rules, reference.explain, reference.docs)
GROUPS = {"catalog": reference.catalog_app, "dcim": dcim.dcim_app}


def _typer(names: Collection[str] | None = None) -> typer.Typer:
    """The app with every command, or with the named ones only (`main`, below)."""
    out = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                      help="Validate AI GPU cluster designs, estimate their performance and generate their BOM.")
    out.callback()(_root)
    for command in COMMANDS:
        if names is None or command.__name__ in names:
            out.command()(command)
    for name, group in GROUPS.items():
        if names is None or name in names:
            out.add_typer(group, name=name)
    return out


def _version(value: bool) -> None:
    if value:
        from validator.resolve.catalog import CATALOG_VERSION

        sys.stdout.write(f"clusterplan {__version__} (catalog {CATALOG_VERSION})\n")
        raise typer.Exit(0)


def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """clusterplan: design validator and bill-of-materials generator for AI GPU clusters."""


app = _typer()


def _app_for(argv: list[str]) -> typer.Typer:
    """The app for one command line: when it names a command, an app holding that command alone.

    typer turns every registered function into a click command before it parses anything (about 30 ms
    for all of them, a twentieth of a cold `validate`); the command a run invokes is the only one it
    needs. Any other command line (no command, `--help`, a misspelt name) gets the whole app, so the
    listing and the did-you-mean are the same."""
    first = next((a for a in argv if not a.startswith("-")), None)
    known = {c.__name__ for c in COMMANDS} | set(GROUPS)
    return _one_command(first) if first in known else app


@cache
def _one_command(name: str) -> typer.Typer:
    return _typer({name})


def main() -> None:
    """Entry point: run the app; bad input never shows a Python traceback.

    Pydantic plugins installed beside clusterplan are not loaded (unless PYDANTIC_DISABLE_PLUGINS says
    otherwise): they would see the untrusted designs being read, and finding them scans the entry points
    of every installed distribution at each start."""
    from validator.emit.escape import visible

    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

    try:
        _app_for(sys.argv[1:])()
    except KeyboardInterrupt:
        sys.stderr.write("clusterplan: interrupted\n")
        sys.exit(130)
    except ToolError as exc:
        sys.stderr.write(f"clusterplan: error: {visible(str(exc))}\n")
        sys.exit(2)
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the trace for debugging
        if os.environ.get("CLUSTERPLAN_DEBUG"):
            raise
        sys.stderr.write(f"clusterplan: internal error: {type(exc).__name__}: {visible(str(exc))}\n"
                         "  please report it with the design that caused it (CLUSTERPLAN_DEBUG=1 shows "
                         "the trace)\n")
        sys.exit(2)


def run() -> None:
    """The process's entry point (`clusterplan`, `python -m validator`): `main`, then every object still alive
    (a big design's plans, held by the exit's traceback) kept out of the interpreter's last collection, which
    would walk them all only to end the process (0.4 s CPU at 1M GPUs). In-process callers use `main`."""
    try:
        main()
    finally:
        gc.freeze()
