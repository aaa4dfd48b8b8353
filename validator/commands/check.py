"""`clusterplan validate` and `clusterplan outputs`: check designs, keep generated files current."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from validator.base.errors import ToolError
from validator.commands.common import (
    ConfigOption,
    FailOn,
    QuietOption,
    begin_progress,
    dump_json,
    fail,
    run_config,
    source_text,
)


class ReportFmt(StrEnum):
    text = "text"
    json = "json"
    md = "md"
    sarif = "sarif"
    junit = "junit"
    github = "github"


def _render_report(fmt: str, analyses: list[Any], files: list[Path], fail_on: str, skipped: int,
                   failed: list[str], colour: bool, annotations: int = 0) -> str:
    from validator.emit.text import render_text

    if fmt == "json":
        from validator.emit.report import report_json

        return dump_json(report_json(analyses, fail_on))
    if fmt in ("md", "sarif", "junit", "github"):
        return _ci_report(fmt, analyses, fail_on, annotations)
    sources = {a.file: source_text(f) for a, f in zip(analyses, files, strict=True) if a.findings}
    return render_text(analyses, sources, colour=colour, skipped=skipped, failed=failed)


def _ci_report(fmt: str, analyses: list[Any], fail_on: str, annotations: int) -> str:
    from validator.emit import ci

    if fmt == "md":
        return ci.markdown(analyses, fail_on)
    if fmt == "sarif":
        return dump_json(ci.sarif(analyses, ci.workspace_root()))
    if fmt == "junit":
        return ci.junit(analyses, fail_on)
    return ci.github(analyses, ci.workspace_root(), limit=annotations)


def _parse_outputs(specs: list[str]) -> list[tuple[str, Path]]:
    out = []
    for spec in specs:
        fmt, sep, file = spec.partition("=")
        if not sep or not file or fmt not in ReportFmt.__members__:
            fail(f"--output {spec!r}: expected FORMAT=FILE with FORMAT one of {', '.join(ReportFmt.__members__)}")
        out.append((fmt, Path(file)))
    return out


def validate(
    paths: Annotated[list[Path], typer.Argument(help="Design files or directories (searched recursively).")],
    fmt: Annotated[ReportFmt, typer.Option("--format", "-f", help="Output format on stdout.")] = ReportFmt.text,
    output: Annotated[list[str] | None, typer.Option("--output", "-o", help="Also write FORMAT=FILE "
                                                     "(repeatable), e.g. sarif=clusterplan.sarif.")] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Lowest severity that fails the run.")] = FailOn.error,
    designs_only: Annotated[bool, typer.Option(help="Skip named files that are not designs "
                                               "(no `apiVersion: clusterplan/...`).")] = False,
    config: ConfigOption = None,
    annotations: Annotated[int, typer.Option(help="With --format github: the most annotations of each "
                                             "severity (GitHub shows 10 + 10 per step); 0 = all.")] = 10,
    quiet: QuietOption = False,
) -> None:
    """Check designs against the schema, the catalog and the engineering rules."""
    begin_progress(quiet)
    from validator.emit.report import fails
    from validator.emit.text import use_colour
    from validator.pipeline import analyze, discover

    outputs = _parse_outputs(output or [])
    try:
        files, skipped = discover(paths, designs_only=designs_only)
    except ToolError as exc:
        fail(str(exc))
    if not files:
        if designs_only:
            raise typer.Exit(0)
        fail("no design files found (a design declares `apiVersion: clusterplan/v1`)")
    run = run_config(config)
    analyses = [analyze(f, run=run) for f in files]
    failed = [a.file for a in analyses if fails(a, fail_on.value)]
    if outputs:     # emit.files (and its hashlib and json) only when there is a file to write
        from validator.emit.files import write_atomic

        for out_fmt, out_file in outputs:
            write_atomic(out_file, _render_report(out_fmt, analyses, files, fail_on.value, skipped, failed, False))
    sys.stdout.write(_render_report(fmt.value, analyses, files, fail_on.value, skipped, failed,
                                    use_colour(sys.stdout), annotations))
    raise typer.Exit(1 if failed else 0)


def outputs(
    config: Annotated[Path | None, typer.Option(help="Repository configuration (default: .clusterplan.yaml).")] = None,
    check: Annotated[bool, typer.Option(help="Only report stale files; do not rewrite them.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Write even for designs with error findings "
                                        "(and say so).")] = False,
    quiet: QuietOption = False,
) -> None:
    """Regenerate the generated files .clusterplan.yaml declares; exit 1 listing those that changed.

    Nothing is written while a design has error findings (exit 1) unless --force."""
    begin_progress(quiet)
    from validator.base.paths import display_name
    from validator.emit.escape import visible
    from validator.emit.render import TemplateError
    from validator.emit.text import render_text
    from validator.read.config import find_config
    from validator.workflows.outputs import Gated, refresh

    try:
        found = config or find_config(Path.cwd())
    except ToolError as exc:
        fail(str(exc))
    if found is None or not found.is_file():
        fail("no .clusterplan.yaml with `outputs:` found")
    try:
        changes = refresh(found, run_config(found), write=not check, force=force)
    except Gated as exc:
        sys.stderr.write(render_text([a for _, a in exc.analyses], {a.file: source_text(p) for p, a in exc.analyses},
                                     failed=[a.file for _, a in exc.analyses]))
        fail(str(exc), 1)
    except TemplateError as exc:
        fail(str(exc), 1)
    except ToolError as exc:
        fail(str(exc))
    for what, path in changes:
        if what == "forced":
            sys.stderr.write(f"clusterplan: outputs of {visible(display_name(path))} written despite its error "
                             "findings (--force)\n")
        elif what == "kept":
            sys.stderr.write(f"clusterplan: kept {visible(display_name(path))}: listed in .clusterplan-outputs.json "
                             "but not as clusterplan wrote it (never removed)\n")
        else:
            sys.stdout.write(f"{what}: {visible(display_name(path))}\n")
    raise typer.Exit(1 if changes else 0)
