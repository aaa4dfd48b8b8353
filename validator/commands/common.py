"""What every command shares: the error exit, JSON text, writing an output, reading a design or
the repository configuration (exit codes: 0 valid, 1 findings at or above the failure level, 2 usage
or tool error)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from validator.base.errors import DesignError, ToolError

if TYPE_CHECKING:   # kept out of start-up: `clusterplan --version` loads none of the pipeline
    from validator.check.result import Analysis
    from validator.read.config import RunConfig

ConfigOption = Annotated[Path | None, typer.Option(
    "--config", help="Repository configuration (default: .clusterplan.yaml in this directory or above, up to "
    "the git root): severities and waivers for every design.")]

PricesOption = Annotated[list[Path] | None, typer.Option(
    "--prices", help="A price book (schemas/pricebook.schema.json) overriding the built-in and the repository's "
    "prices; repeatable, later ones win. Must be inside the repository.")]

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display on stderr (it shows on "
                                           "commands running longer than 2 s; CLUSTERPLAN_NO_PROGRESS=1 too).")]


def begin_progress(quiet: bool) -> None:
    """A command starts: progress on stderr from 2 s on unless `quiet` (validator/emit/progress.py)."""
    from validator.emit.progress import begin

    begin(quiet)


class FailOn(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


class Fmt(StrEnum):
    text = "text"
    json = "json"


def fail(message: str, code: int = 2) -> NoReturn:
    from validator.emit.escape import visible

    sys.stderr.write(f"clusterplan: error: {visible(message)}\n")
    raise typer.Exit(code)


def dump_json(data: Any) -> str:
    from validator.emit.escape import to_json

    return to_json(data) + "\n"


def emit(data: str | bytes, output: Path | None) -> None:
    """Write to `output` atomically, or to stdout (text only)."""
    from validator.emit.escape import terminal_text
    from validator.emit.files import write_atomic

    if output is not None:
        write_atomic(output, data)
    elif isinstance(data, bytes):
        fail("this format is binary: write it to a file with -o FILE")
    else:
        sys.stdout.write(terminal_text(data))


def run_config(path: Path | None, prices: list[Path] | None = None) -> RunConfig:
    """The run's configuration: .clusterplan.yaml (given, or found from here up to the git root), and the
    price books given with --prices."""
    from validator.read.config import RunConfig, find_config, load_config

    if path is not None and not path.is_file():
        fail(f"{path}: no such configuration file")
    for book in prices or []:
        if not book.is_file():
            fail(f"{book}: no such price book")
    books = tuple(prices or ())
    try:
        found = path or find_config(Path.cwd())
    except ToolError as exc:
        fail(str(exc))
    if found is None:
        return RunConfig(price_files=books)
    from validator.check.registry import RULES

    try:
        return RunConfig(load_config(found, [r.id for r in RULES]), found, price_files=books)
    except DesignError as exc:
        from validator.emit.escape import visible

        for d in sorted(exc.diagnostics, key=lambda d: (d.line, d.col)):
            hint = f" ({d.hint})" if d.hint else ""
            sys.stderr.write(f"clusterplan: error: {visible(f'{d.file}:{d.line}:{d.col}: {d.message}{hint}')}\n")
        raise typer.Exit(2) from None


def source_text(path: Path) -> str:
    """The text of a design, to quote its lines in messages: a regular file inside the repository and
    within the size limit only (a symlink out of the repository is never quoted)."""
    from validator.base.paths import confine, repository_root
    from validator.read.loader import read_bytes

    try:
        return read_bytes(confine(path, repository_root(path)), str(path)).decode("utf-8", errors="replace")
    except (DesignError, ToolError):
        return ""


def gate_errors(design: Path, analysis: Analysis, force: bool) -> int:
    """The error findings of a design about to have outputs written: with any, and without --force,
    print them and exit 1 before anything is written. Returns how many there are."""
    from validator.emit.report import fails
    from validator.emit.text import render_text

    errors = sum(1 for f in analysis.findings if not f.waived and f.severity == "error")
    if fails(analysis, "error") and not force:
        sys.stderr.write(render_text([analysis], {analysis.file: source_text(design)}, failed=[analysis.file]))
        fail(f"{analysis.file} has {errors} error finding{'s' * (errors != 1)}: nothing is written for a design "
             "that fails validation (fix it, or pass --force to write anyway)", 1)
    return errors


def analysis_or_exit(design: Path, run: RunConfig) -> Analysis:
    """The analysis of one design that could be read and expanded; else its reading errors and exit 1."""
    from validator.emit.text import render_text
    from validator.pipeline import analyze

    if design.is_dir():
        fail(f"{design}: is a directory; name one design file (`clusterplan validate` takes directories)")
    if not design.is_file():
        fail(f"{design}: no such design file")
    analysis = analyze(design, run=run)
    if analysis.topology is None:
        sys.stderr.write(render_text([analysis], {analysis.file: source_text(design)}, failed=[analysis.file]))
        raise typer.Exit(1)
    return analysis
