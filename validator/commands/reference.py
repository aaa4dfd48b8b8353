"""`clusterplan schema`, `rules`, `explain`, `docs` and `catalog`: the reference material."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from validator.commands.common import Fmt, dump_json, fail

catalog_app = typer.Typer(no_args_is_help=True, help="Browse the built-in hardware and model catalog.")


class SchemaName(StrEnum):
    design = "design"
    catalog = "catalog"
    pricebook = "pricebook"
    racks = "racks"
    sizing = "sizing"
    report = "report"
    describe = "describe"
    topology = "topology"
    failures = "failures"
    bom = "bom"
    estimate = "estimate"


def schema(
    which: Annotated[SchemaName, typer.Argument(
        help="design (default), catalog, pricebook, racks, sizing (the request of `clusterplan size`), report "
             "(validate --format json), describe, topology, failures, bom or estimate.")] = SchemaName.design,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file instead of stdout.")] = None,
    check: Annotated[bool, typer.Option(help="Exit 1 if a committed schema differs from the models.")] = False,
    install: Annotated[Path | None, typer.Option(
        help="Offline editors: write the design schema into the repository holding this design or directory "
             "(.clusterplan/) and point each design's modeline at it by a relative path.")] = None,
) -> None:
    """Print the JSON Schema of the design format, of catalog files, of price books, of rack elevations, of
    sizing requests or of a JSON output (generated from the models)."""
    from validator.base.resources import resource_dir
    from validator.emit.files import write_atomic
    from validator.emit.schemas import generated_schemas

    schemas = generated_schemas()
    if install is not None:
        from validator.emit.schema_install import SCHEMA_FILE, install_schema

        if not install.exists():
            fail(f"{install}: no such file or directory", 2)
        target, changed = install_schema(install, schemas[SCHEMA_FILE])
        sys.stderr.write(f"wrote {target}; modeline set in {len(changed)} design(s)\n")
        for path in changed:
            sys.stderr.write(f"  {path}\n")
        return
    if check:
        stale = [name for name, text in schemas.items()
                 if not (resource_dir("schemas") / name).is_file()
                 or (resource_dir("schemas") / name).read_text(encoding="utf-8") != text]
        if stale:
            fail("out of date: " + ", ".join(f"schemas/{n}" for n in stale) +
                  "; run `clusterplan schema -o schemas/<file>` for each", 1)
        return
    name = next(n for n in schemas if n.startswith((f"clusterplan-{which.value}.", f"{which.value}.")))
    if output:
        write_atomic(output, schemas[name])
    else:
        sys.stdout.write(schemas[name])


def rules(fmt: Annotated[Fmt, typer.Option("--format", "-f", help="Output format.")] = Fmt.text) -> None:
    """List the engineering rules: ID, severity, what they apply to, title."""
    from validator.check.base import as_dict
    from validator.check.registry import RULES

    if fmt == Fmt.json:
        sys.stdout.write(dump_json([as_dict(r) for r in RULES]))
        return
    for r in RULES:
        sys.stdout.write(f"{r.id}  {r.severity:<7}  {r.applies_to:<9}  {r.slug:<26} {r.title}\n")
    from validator.base.findings import READ_CODES

    for rid, (slug, what) in sorted(READ_CODES.items()):
        sys.stdout.write(f"{rid}  {'error':<7}  {'reading':<9}  {slug:<26} {what}\n")


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
        fail(f"no rule {rule_id}" + (f"; did you mean {', '.join(close)}?" if close else
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
        fail(f"unknown catalog kind {kind!r}; use one of {', '.join(cat.entries)}")
    kinds = [kind] if kind else list(cat.entries)
    rows = [(k, e.id, e.name) for k in kinds for e in sorted(cat.entries[k].values(), key=lambda e: e.id)]
    if fmt == Fmt.json:
        sys.stdout.write(dump_json([{"kind": k, "id": i, "name": n} for k, i, n in rows]))
        return
    width = max((len(i) for _, i, _ in rows), default=10)
    sys.stdout.write("".join(f"{k:<12} {i:<{width}}  {n}\n" for k, i, n in rows))


@catalog_app.command("check")
def catalog_check(
    prices: Annotated[list[Path] | None, typer.Option("--prices", help="Also apply this price book.")] = None,
    fmt: Annotated[Fmt, typer.Option("--format", "-f")] = Fmt.text,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any entry has a gap.")] = False,
) -> None:
    """Report built-in catalog entries missing power, price, cage (and module top) or source, and list every
    price by basis, age and source class; exit 1 on a derived or proxy price without its derivation."""
    from datetime import date

    from validator.base.errors import DesignError
    from validator.resolve.catalog import builtin_catalog
    from validator.resolve.catalog.check import catalog_gaps, price_audit
    from validator.resolve.prices import BookRef, price_table

    try:
        table = price_table([BookRef(p, str(p), p.resolve().parent, "--prices") for p in prices or []])
    except DesignError as exc:
        fail("; ".join(f"{d.file}:{d.line}: {d.message}" for d in exc.diagnostics))
    gaps = catalog_gaps(builtin_catalog(), table)
    audit = price_audit(builtin_catalog(), table, date.today())
    if fmt == Fmt.json:
        sys.stdout.write(dump_json({
            "gaps": [{"kind": g.kind, "id": g.id, "field": g.field, "detail": g.detail} for g in gaps],
            "prices": [{"kind": r.kind, "id": r.id, "basis": r.basis, "date": r.date, "age_months": r.age_months,
                        "source_class": r.source_class, "origin": r.origin, "problem": r.problem} for r in audit]}))
    else:
        sys.stdout.write(_check_text(gaps, audit))
    if any(r.problem for r in audit) or (strict and gaps):
        raise typer.Exit(1)


def _check_text(gaps: list[Any], audit: list[Any]) -> str:
    width = max((len(g.id) for g in gaps), default=10)
    out = [f"{g.kind:<12} {g.id:<{width}}  {g.field:<6} {g.detail}\n" for g in gaps]
    fields = sorted({g.field for g in gaps})
    out.append(f"{len(gaps)} gaps: " + ", ".join(f"{sum(g.field == f for g in gaps)} {f}" for f in fields) + "\n\n")
    width = max((len(r.id) for r in audit), default=10)
    out.append(f"{'basis':<8} {'source':<10} {'date':<10} {'age':>5}  {'part':<{width}}  price book\n")
    for r in audit:
        age = "?" if r.age_months is None else f"{r.age_months}mo"
        out.append(f"{r.basis:<8} {r.source_class or '-':<10} {r.date or '-':<10} {age:>5}  {r.id:<{width}}  "
                   f"{r.origin}{'  PROBLEM: ' + r.problem if r.problem else ''}\n")
    for name, key in (("basis", "basis"), ("source class", "source_class")):
        counts: dict[str, int] = {}
        for r in audit:
            counts[getattr(r, key) or "-"] = counts.get(getattr(r, key) or "-", 0) + 1
        out.append(f"prices by {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "\n")
    return "".join(out)


@catalog_app.command("show")
def catalog_show(entry_id: Annotated[str, typer.Argument(help="Catalog id, e.g. qm9700.")]) -> None:
    """Show every field of one catalog entry, with its source."""
    from validator.resolve.catalog import builtin_catalog

    cat = builtin_catalog()
    for kind, entries in cat.entries.items():
        if entry_id in entries:
            data = {"kind": kind, **entries[entry_id].model_dump(mode="json", exclude_none=False)}
            sys.stdout.write(dump_json(data))
            return
    all_ids = [i for entries in cat.entries.values() for i in entries]
    import difflib

    close = difflib.get_close_matches(entry_id, all_ids, n=3)
    fail(f"no catalog entry '{entry_id}'" + (f"; did you mean {', '.join(close)}?" if close else ""))
