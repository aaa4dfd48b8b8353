"""The `clusterplan` command: a thin layer over validator.pipeline and the export modules.

Exit codes: 0 valid, 1 findings at or above the failure level, 2 usage or tool error.
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from validator import __version__
from validator.base.errors import DesignError, ToolError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Validate AI GPU cluster designs, estimate their performance and generate their BOM.")
catalog_app = typer.Typer(no_args_is_help=True, help="Browse the built-in hardware and model catalog.")
app.add_typer(catalog_app, name="catalog")


class FailOn(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


class Fmt(StrEnum):
    text = "text"
    json = "json"


def _fail(message: str, code: int = 2) -> NoReturn:
    sys.stderr.write(f"clusterplan: error: {message}\n")
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        from validator.resolve.catalog import CATALOG_VERSION

        sys.stdout.write(f"clusterplan {__version__} (catalog {CATALOG_VERSION})\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """clusterplan: design validator and bill-of-materials generator for AI GPU clusters."""


def _dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


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

        return _dump_json(report_json(analyses, fail_on))
    if fmt in ("md", "sarif", "junit", "github"):
        return _ci_report(fmt, analyses, fail_on, annotations)
    sources = {a.file: _source(f) for a, f in zip(analyses, files, strict=True) if a.findings}
    return render_text(analyses, sources, colour=colour, skipped=skipped, failed=failed)


def _ci_report(fmt: str, analyses: list[Any], fail_on: str, annotations: int) -> str:
    from validator.emit import ci

    if fmt == "md":
        return ci.markdown(analyses, fail_on)
    if fmt == "sarif":
        return _dump_json(ci.sarif(analyses, ci.workspace_root()))
    if fmt == "junit":
        return ci.junit(analyses, fail_on)
    return ci.github(analyses, ci.workspace_root(), limit=annotations)


def _parse_outputs(specs: list[str]) -> list[tuple[str, Path]]:
    out = []
    for spec in specs:
        fmt, sep, file = spec.partition("=")
        if not sep or not file or fmt not in ReportFmt.__members__:
            _fail(f"--output {spec!r}: expected FORMAT=FILE with FORMAT one of {', '.join(ReportFmt.__members__)}")
        out.append((fmt, Path(file)))
    return out


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Design files or directories (searched recursively).")],
    fmt: Annotated[ReportFmt, typer.Option("--format", "-f", help="Output format on stdout.")] = ReportFmt.text,
    output: Annotated[list[str] | None, typer.Option("--output", "-o", help="Also write FORMAT=FILE "
                                                     "(repeatable), e.g. sarif=clusterplan.sarif.")] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Lowest severity that fails the run.")] = FailOn.error,
    designs_only: Annotated[bool, typer.Option(help="Skip named files that are not designs "
                                               "(no `apiVersion: clusterplan/...`).")] = False,
    config: Annotated[Path | None, typer.Option(help="Repository configuration (default: .clusterplan.yaml "
                                                "in this directory or above, up to the git root).")] = None,
    annotations: Annotated[int, typer.Option(help="With --format github: the most annotations of each "
                                             "severity (GitHub shows 10 + 10 per step); 0 = all.")] = 10,
) -> None:
    """Check designs against the schema, the catalog and the engineering rules."""
    from validator.emit.files import write_atomic
    from validator.emit.report import fails
    from validator.emit.text import use_colour
    from validator.pipeline import analyze, discover

    outputs = _parse_outputs(output or [])
    try:
        files, skipped = discover(paths, designs_only=designs_only)
    except ToolError as exc:
        _fail(str(exc))
    if not files:
        if designs_only:
            raise typer.Exit(0)
        _fail("no design files found (a design declares `apiVersion: clusterplan/v1`)")
    severity = _repo_config(config).severity
    analyses = [analyze(f, severity=severity) for f in files]
    failed = [a.file for a in analyses if fails(a, fail_on.value)]
    for out_fmt, out_file in outputs:
        write_atomic(out_file, _render_report(out_fmt, analyses, files, fail_on.value, skipped, failed, False))
    sys.stdout.write(_render_report(fmt.value, analyses, files, fail_on.value, skipped, failed,
                                    use_colour(sys.stdout), annotations))
    raise typer.Exit(1 if failed else 0)


def _repo_config(path: Path | None) -> Any:
    from validator.read.config import RepoConfig, find_config, load_config

    found = path or find_config(Path.cwd())
    if path is not None and not path.is_file():
        _fail(f"{path}: no such configuration file")
    if found is None:
        return RepoConfig()
    try:
        return load_config(found)
    except DesignError as exc:
        d = exc.diagnostics[0]
        _fail(f"{d.file}:{d.line}:{d.col}: {d.message}")


@app.command()
def outputs(
    config: Annotated[Path | None, typer.Option(help="Repository configuration (default: .clusterplan.yaml).")] = None,
    check: Annotated[bool, typer.Option(help="Only report stale files; do not rewrite them.")] = False,
) -> None:
    """Regenerate the generated files .clusterplan.yaml declares; exit 1 listing those that changed."""
    from validator.read.config import find_config
    from validator.workflows.outputs import refresh

    found = config or find_config(Path.cwd())
    if found is None or not found.is_file():
        _fail("no .clusterplan.yaml with `outputs:` found")
    try:
        stale = refresh(found, _repo_config(found), write=not check)
    except ToolError as exc:
        _fail(str(exc))
    from validator.base.paths import display_name

    for path in stale:
        sys.stdout.write(f"{'stale' if check else 'regenerated'}: {display_name(path)}\n")
    raise typer.Exit(1 if stale else 0)


def _source(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _topology_or_exit(design: Path) -> Any:
    from validator.base.findings import from_diagnostic
    from validator.base.paths import display_name
    from validator.check.result import Analysis
    from validator.emit.text import render_text
    from validator.pipeline import load_topology

    if design.is_dir():
        _fail(f"{design}: is a directory; name one design file (`clusterplan validate` takes directories)")
    if not design.is_file():
        _fail(f"{design}: no such design file")
    try:
        return load_topology(design)
    except DesignError as exc:
        analysis = Analysis(display_name(design), [from_diagnostic(d) for d in exc.diagnostics])
        sys.stderr.write(render_text([analysis], {analysis.file: _source(design)}, failed=[analysis.file]))
        raise typer.Exit(1) from None


@app.command()
def describe(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
) -> None:
    """Show what a design resolves to: GPUs, servers, racks, NVLink domains, fabric tiers, IT power."""
    from validator.emit.describe import describe as facts_of
    from validator.emit.describe import describe_text

    facts = facts_of(_topology_or_exit(design))
    sys.stdout.write(_dump_json(facts) if fmt == Fmt.json else describe_text(facts))


@app.command()
def estimate(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text,
) -> None:
    """Estimate performance: training step time, MFU, time-to-train; inference TTFT, TPOT, concurrency, cost."""
    from validator.derive.estimate import estimate as estimate_of
    from validator.emit.scorecard import scorecard

    result = estimate_of(_topology_or_exit(design))
    sys.stdout.write(_dump_json(result) if fmt == Fmt.json else scorecard(result))


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


def _emit(data: str | bytes, output: Path | None) -> None:
    from validator.emit.files import write_atomic

    if output is not None:
        write_atomic(output, data)
    elif isinstance(data, bytes):
        _fail("this format is binary: write it to a file with -o FILE")
    else:
        sys.stdout.write(data)


def _workbook(design: Path, topology: Any, timestamp: str | None) -> bytes:
    from validator.emit.workbook import build_workbook

    try:
        return build_workbook(design, topology, timestamp)
    except ValueError:
        _fail(f"--timestamp {timestamp!r}: expected an ISO date such as 2026-12-01T00:00:00")


@app.command()
def bom(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[BomFmt, typer.Option("--format", "-f", help="Output format.")] = BomFmt.text,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO); default: the design's last "
                                                  "git commit, or SOURCE_DATE_EPOCH.")] = None,
) -> None:
    """Bill of materials: servers, GPUs, NICs, switches, optics, cables, racks, PDUs, cooling; power and cost."""
    from validator.derive.bom import build_bom
    from validator.emit import tables

    topology = _topology_or_exit(design)
    if fmt == BomFmt.xlsx:
        _emit(_workbook(design, topology, timestamp), output)
        return
    result = build_bom(topology)
    text = {BomFmt.text: lambda: tables.bom_text(result), BomFmt.md: lambda: tables.bom_text(result, markdown=True),
            BomFmt.csv: lambda: tables.bom_csv(result), BomFmt.json: lambda: tables.bom_json(result)}[fmt]()
    _emit(text, output)


@app.command()
def cabling(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    fmt: Annotated[CablingFmt, typer.Option("--format", "-f", help="Output format.")] = CablingFmt.csv,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file (atomically).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="Workbook date (ISO), for --format xlsx.")] = None,
) -> None:
    """Cabling plan: one row per link, A end to Z end, with racks, media, transceivers and length."""
    from validator.derive.cabling import Plan
    from validator.emit import tables
    from validator.emit.files import write_atomic_lines

    topology = _topology_or_exit(design)
    if fmt == CablingFmt.xlsx:
        _emit(_workbook(design, topology, timestamp), output)
        return
    plan = Plan(topology)
    if fmt == CablingFmt.json:
        _emit(tables.cabling_json(plan), output)
    elif output is not None:
        write_atomic_lines(output, tables.cabling_csv_rows(plan))
    else:
        for line in tables.cabling_csv_rows(plan):
            sys.stdout.write(line)


@app.command()
def render(
    design: Annotated[Path, typer.Argument(help="A design file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write into.")],
) -> None:
    """Write switch configuration skeletons (SONiC, EOS, NVUE, OpenSM), the BOM and the cabling plan."""
    from validator.emit.render import TemplateError, render_all

    topology = _topology_or_exit(design)
    user = _user_templates(design, topology)
    try:
        written = render_all(topology, output, user)
    except TemplateError as exc:
        _fail(str(exc), 1)
    sys.stderr.write(f"wrote {len(written)} files under {output}\n")


def _user_templates(design: Path, topology: Any) -> Path | None:
    from validator.base.paths import repository_root

    rel: str | None = topology.resolved.design.templates
    if rel is None:
        return None
    root = repository_root(design)
    try:
        path = (design.parent / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        _fail(f"{design}: templates directory '{rel}' not found", 1)
    if not path.is_relative_to(root) or not path.is_dir():
        _fail(f"{design}: templates '{rel}' must be a directory inside the design repository", 1)
    found: Path = path
    return found


class DiffFmt(StrEnum):
    text = "text"
    md = "md"
    json = "json"


@app.command()
def diff(
    designs: Annotated[list[Path] | None, typer.Argument(help="BASE HEAD design files, or with --git-ref the "
                                                        "paths to compare (default: the whole repository).")] = None,
    git_ref: Annotated[str | None, typer.Option("--git-ref", help="Compare every changed design with this "
                                                "ref.")] = None,
    fmt: Annotated[DiffFmt, typer.Option("--format", "-f", help="Output format.")] = DiffFmt.text,
    fail_if: Annotated[list[str] | None, typer.Option("--fail-if", help="Gate, e.g. 'capex > +10%' or "
                                                      "'mfu < -2pt' (repeatable).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
) -> None:
    """Change in GPUs, switches, optics, power, capex, performance and findings between two versions."""
    from validator.base.paths import display_name
    from validator.workflows import diff_report
    from validator.workflows.diff import compare, git_diffs, parse_gate

    try:
        gates = [parse_gate(g) for g in fail_if or []]
        if git_ref:
            diffs = git_diffs(git_ref, designs or [])
        else:
            if not designs or len(designs) != 2:
                _fail("give two design files (BASE HEAD), or --git-ref REF [PATH...]")
            for p in designs:
                if not p.is_file():
                    _fail(f"{p}: no such design file")
            diffs = [compare(designs[0], designs[1], display_name(designs[1]))]
    except ToolError as exc:
        _fail(str(exc))
    tripped = [t for d in diffs for g in gates if (t := g.trips(d))]
    render = {DiffFmt.text: diff_report.diff_text, DiffFmt.md: diff_report.diff_markdown,
              DiffFmt.json: diff_report.diff_json}[fmt]
    _emit(render(diffs, tripped), output)
    raise typer.Exit(1 if tripped else 0)


class SchemaName(StrEnum):
    design = "design"
    catalog = "catalog"


@app.command()
def schema(
    which: Annotated[SchemaName, typer.Argument(help="design (default) or catalog.")] = SchemaName.design,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file instead of stdout.")] = None,
    check: Annotated[bool, typer.Option(help="Exit 1 if a committed schema differs from the models.")] = False,
) -> None:
    """Print the JSON Schema of the design format or of catalog files (generated from the models)."""
    from validator.base.resources import resource_dir
    from validator.emit.files import write_atomic
    from validator.emit.schemas import generated_schemas

    schemas = generated_schemas()
    if check:
        stale = [name for name, text in schemas.items()
                 if not (resource_dir("schemas") / name).is_file()
                 or (resource_dir("schemas") / name).read_text(encoding="utf-8") != text]
        if stale:
            _fail("out of date: " + ", ".join(f"schemas/{n}" for n in stale) +
                  "; run `clusterplan schema -o schemas/<file>` for each", 1)
        return
    name = next(n for n in schemas if n.startswith(f"clusterplan-{which.value}."))
    if output:
        write_atomic(output, schemas[name])
    else:
        sys.stdout.write(schemas[name])


@app.command()
def rules(fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text) -> None:
    """List the engineering rules: ID, severity, what they apply to, title."""
    from validator.check.base import as_dict
    from validator.check.registry import RULES

    if fmt == Fmt.json:
        sys.stdout.write(_dump_json([as_dict(r) for r in RULES]))
        return
    for r in RULES:
        sys.stdout.write(f"{r.id}  {r.severity:<7}  {r.applies_to:<9}  {r.slug:<26} {r.title}\n")
    from validator.base.findings import READ_CODES

    for rid, (slug, what) in sorted(READ_CODES.items()):
        sys.stdout.write(f"{rid}  {'error':<7}  {'reading':<9}  {slug:<26} {what}\n")


@app.command()
def explain(rule_id: Annotated[str, typer.Argument(help="Rule ID, e.g. TRN002.")]) -> None:
    """Print a rule's rationale, source, fix and thresholds."""
    from validator.base.findings import READ_CODES
    from validator.check.registry import RULES, rule_by_id

    rule = rule_by_id(rule_id.upper())
    if rule is None and rule_id.upper() in READ_CODES:
        slug, what = READ_CODES[rule_id.upper()]
        sys.stdout.write(f"{rule_id.upper()} {slug}: {what}\n  a reading check: always an error, not waivable; "
                         "the finding's hint says what to change\n")
        return
    if rule is None:
        import difflib

        close = difflib.get_close_matches(rule_id.upper(), [r.id for r in RULES] + list(READ_CODES), n=3)
        _fail(f"no rule {rule_id}" + (f"; did you mean {', '.join(close)}?" if close else
                                      "; `clusterplan rules` lists them"))
    d = rule.doc
    text = (f"{rule.id} {rule.slug}: {rule.title}\n  severity {rule.severity}, applies to {rule.applies_to}, "
            f"{'waivable' if rule.waivable else 'not waivable'}\n\n{d['rationale']}\n\nSource: {d['source']}\n"
            f"Fix: {d['fix']}\n")
    if rule.thresholds:
        text += "Thresholds: " + ", ".join(rule.thresholds) + " (override with `thresholds:` in the design)\n"
    if d["example"]:
        text += "\nExample that triggers it:\n" + "\n".join(f"  {line}" for line in d["example"].splitlines()) + "\n"
    sys.stdout.write(text)


class DocName(StrEnum):
    design_format = "design-format"
    rules = "rules"


@app.command()
def docs(
    page: Annotated[DocName, typer.Argument(help="Which generated page.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file.")] = None,
) -> None:
    """Print a generated documentation page (docs/design-format.md, docs/rules.md)."""
    from validator.emit.docs import design_format_md, rules_md
    from validator.emit.files import write_atomic

    text = {DocName.design_format: design_format_md, DocName.rules: rules_md}[page]()
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


@catalog_app.command("list")
def catalog_list(
    kind: Annotated[str | None, typer.Argument(help="gpu, server, nic, switch, transceiver, cable, facility "
                                               "or model.")] = None,
    fmt: Annotated[Fmt, typer.Option("--format", "-f")] = Fmt.text,
) -> None:
    """List catalog entries, optionally of one kind."""
    from validator.resolve.catalog import builtin_catalog

    cat = builtin_catalog()
    if kind is not None and kind not in cat.entries:
        _fail(f"unknown catalog kind {kind!r}; use one of {', '.join(cat.entries)}")
    kinds = [kind] if kind else list(cat.entries)
    rows = [(k, e.id, e.name) for k in kinds for e in sorted(cat.entries[k].values(), key=lambda e: e.id)]
    if fmt == Fmt.json:
        sys.stdout.write(_dump_json([{"kind": k, "id": i, "name": n} for k, i, n in rows]))
        return
    width = max((len(i) for _, i, _ in rows), default=10)
    sys.stdout.write("".join(f"{k:<12} {i:<{width}}  {n}\n" for k, i, n in rows))


@catalog_app.command("show")
def catalog_show(entry_id: Annotated[str, typer.Argument(help="Catalog id, e.g. qm9700.")]) -> None:
    """Show every field of one catalog entry, with its source."""
    from validator.resolve.catalog import builtin_catalog

    cat = builtin_catalog()
    for kind, entries in cat.entries.items():
        if entry_id in entries:
            data = {"kind": kind, **entries[entry_id].model_dump(mode="json", exclude_none=False)}
            sys.stdout.write(_dump_json(data))
            return
    all_ids = [i for entries in cat.entries.values() for i in entries]
    import difflib

    close = difflib.get_close_matches(entry_id, all_ids, n=3)
    _fail(f"no catalog entry '{entry_id}'" + (f"; did you mean {', '.join(close)}?" if close else ""))


def main() -> None:
    """Entry point: run the app; bad input never shows a Python traceback."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("clusterplan: interrupted\n")
        sys.exit(130)
    except ToolError as exc:
        sys.stderr.write(f"clusterplan: error: {exc}\n")
        sys.exit(2)
    except Exception as exc:  # a bug, not bad input: say so plainly, keep the trace for debugging
        if os.environ.get("CLUSTERPLAN_DEBUG"):
            raise
        sys.stderr.write(f"clusterplan: internal error: {type(exc).__name__}: {exc}\n"
                         "  please report it with the design that caused it (CLUSTERPLAN_DEBUG=1 shows "
                         "the trace)\n")
        sys.exit(2)
