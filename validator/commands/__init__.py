"""The `clusterplan` command: a thin layer over validator.pipeline, validator.workflows and the emit
modules, one module per command group. Commands are registered here, explicitly, in the order
`clusterplan --help` lists them.

Exit codes: 0 valid, 1 findings at or above the failure level, 2 usage or tool error.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from validator import __version__
from validator.base.errors import ToolError
from validator.commands import build, check, compare, failures, inspect, plan, reference, report, topology

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Validate AI GPU cluster designs, estimate their performance and generate their BOM.")

for command in (check.validate, inspect.describe, inspect.estimate, build.bom, build.cabling, build.racks, build.render,
                compare.diff, plan.size, plan.sweep, check.outputs, failures.failures, topology.topology, report.report,
                reference.schema, reference.rules, reference.explain, reference.docs):
    app.command()(command)
app.add_typer(reference.catalog_app, name="catalog")


def _version(value: bool) -> None:
    if value:
        from validator.resolve.catalog import CATALOG_VERSION

        sys.stdout.write(f"clusterplan {__version__} (catalog {CATALOG_VERSION})\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """clusterplan: design validator and bill-of-materials generator for AI GPU clusters."""


def main() -> None:
    """Entry point: run the app; bad input never shows a Python traceback."""
    from validator.emit.escape import visible

    try:
        app()
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
