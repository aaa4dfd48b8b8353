"""The pipeline, written once: the small Python API that every command is a thin layer over.

    analyze(path) -> Analysis
        read     read_design       YAML with positions, schema, the Design model
        resolve  load_catalog, resolve
        expand   build_topology    fabric sizing, rack plan
        derive   Derived           link plan, placement, media, estimate, BOM (lazily, once each)
        check    run_rules         findings, severities, waivers
    emit (text, JSON, SARIF, BOM, cabling, configs) formats an Analysis; it never recomputes a fact.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from pathlib import Path

from validator.base.errors import DesignError, Diagnostic, ToolError
from validator.base.findings import from_diagnostic, sort_key
from validator.base.limits import limits
from validator.base.paths import OutsideRepository, confine, display_name, repository_root, walk
from validator.check.engine import run_rules
from validator.check.result import Analysis
from validator.derive import Derived
from validator.emit.escape import printable_finding, visible
from validator.emit.progress import stage
from validator.expand.topology import Topology, build_topology
from validator.read.config import RunConfig, tco_settings
from validator.read.design_file import parse_design, read_design
from validator.read.loader import read_bytes
from validator.resolve.catalog import load_catalog
from validator.resolve.prices import Costing
from validator.resolve.resolved import resolve

_DESIGN_MARK = re.compile(rb"^apiVersion:\s*[\"']?clusterplan/", re.MULTILINE)
_REQUEST_MARK = re.compile(rb"^kind:\s*[\"']?SizingRequest\b", re.MULTILINE)   # `clusterplan size` input
YAML_SUFFIXES = (".yaml", ".yml")


def discover(paths: list[Path], *, designs_only: bool = False) -> tuple[list[Path], int]:
    """Design files under `paths`; files given by name are always taken. Returns (files, skipped).

    A directory walk takes `*.yaml` / `*.yml` files that declare `apiVersion: clusterplan/...`
    (catalog files and unrelated YAML are skipped and counted), follows no directory symlinks
    (so loops cannot hang it) and stops beyond the file limit. With `designs_only`, files given by
    name are filtered the same way (the pre-commit hook passes every staged YAML file).
    """
    files: list[Path] = []
    skipped = 0
    for p in paths:
        if not p.exists():
            raise ToolError(f"{p}: no such file or directory")
        if p.is_file():
            if designs_only and not looks_like_design(p):
                skipped += 1
            else:
                files.append(p)
            continue
        if not p.is_dir():
            raise ToolError(f"{p}: not a regular file or directory")
        for root, dirs, names in walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                if not name.endswith(YAML_SUFFIXES):
                    continue
                candidate = Path(root) / name
                if looks_like_design(candidate):
                    files.append(candidate)
                    if len(files) > limits().max_files:
                        raise ToolError(f"more than {limits().max_files:,} design files under {p}; "
                                        "name the files or a smaller directory")
                else:
                    skipped += 1
    return files, skipped


def looks_like_design(path: Path) -> bool:
    """Whether a file's head declares a design (a FIFO or device is never opened for reading)."""
    try:
        head = read_bytes(path, str(path), limit=65536)
    except DesignError as exc:
        return "cannot read" in exc.diagnostics[0].message  # let analyze() say why it cannot be read
    return bool(_DESIGN_MARK.search(head)) and not _REQUEST_MARK.search(head)


def costing(run: RunConfig | None) -> Costing:
    """The price books (repository's, then --prices) and repository TCO settings of a run."""
    from validator.resolve.prices import BookRef, price_table

    if run is None:
        return Costing()
    refs: list[BookRef] = []
    if run.config_path is not None:
        base = run.config_path.parent
        root = repository_root(run.config_path)
        refs += [BookRef(base / rel, str(Path(display_name(run.config_path)).parent / rel), root,
                         f"{display_name(run.config_path)} prices[{i}]") for i, rel in enumerate(run.repo.prices)]
    cwd_root = repository_root(Path.cwd() / "-")
    refs += [BookRef(p, display_name(p), cwd_root, "--prices") for p in run.price_files]
    tco = tco_settings(run.repo)
    return Costing(price_table(refs), tco)


def load_topology(path: Path, display: str | None = None, run: RunConfig | None = None,
                  text: str | None = None) -> Topology:
    """read -> resolve -> expand for one design; raises DesignError with every reading problem.

    `text`: the design's text, read as if it were the file at `path` (catalogs resolve next to it);
    `size` and `sweep` analyse designs they build this way without writing them anywhere."""
    display = display or display_name(path)
    try:
        if text is None:
            confine(path, repository_root(path), "design file")
    except OutsideRepository:
        raise DesignError([Diagnostic("YAML000", "the file is a symlink that leads outside the repository", display,
                                      hint="a design must be a file inside the repository; symlinks out of it are "
                                      "not followed")]) from None
    try:
        loaded, design = read_design(path, display) if text is None else parse_design(text, display)
    except OSError as exc:
        raise DesignError([Diagnostic("YAML000", f"cannot read the file: {exc.strerror or exc}", display,
                                      hint="check the path and its permissions")]) from None
    unknown = _unknown_rules(design.severity)
    if unknown:
        raise DesignError([Diagnostic("SCH001", f"unknown rule '{rule}' in severity", display,
                                      *loaded.where(("severity", rule), key=True), ("severity", rule), hint)
                           for rule, hint in unknown])
    catalog = load_catalog(path, display, list(design.catalogs),
                           lambda i: loaded.where(("catalogs", i)))
    resolved = resolve(design, loaded, catalog, costing(run))
    topology = build_topology(resolved)
    problems = [Diagnostic("TOP001", f"fabric {p.path[1]}: {p.message}", display, *loaded.where(p.path), p.path,
                           "choose switches with ports at the fabric speed, or set the tier counts")
                for p in topology.problems if p.rule == "TOP001"]
    if problems:
        raise DesignError(problems)
    return topology


def _unknown_rules(severity: Collection[str]) -> list[tuple[str, str]]:
    """Severity overrides for rules that do not exist, each with a did-you-mean hint."""
    from validator.check.registry import RULES

    known = [r.id for r in RULES]
    out = []
    for rule in severity:
        if rule not in known:
            close = difflib.get_close_matches(rule, known, n=1, cutoff=0.6)
            out.append((rule, f"did you mean '{close[0]}'?" if close else "`clusterplan rules` lists the rule IDs"))
    return out


def analyze(path: Path, display: str | None = None, run: RunConfig | None = None,
            text: str | None = None) -> Analysis:
    """read -> resolve -> expand -> derive -> check for one design. Never raises for a bad design.

    `run` carries the repository's severities and waivers (.clusterplan.yaml); the design's own win.
    Derived facts are computed lazily: a rule or an output that needs one computes it once. `text`: as
    for load_topology.
    """
    display = visible(display or display_name(path))   # a file name may hold any character
    run = run or RunConfig()
    try:
        with stage(f"{display}: read, resolve, expand"):
            topology = load_topology(path, display, run, text)
    except DesignError as exc:
        return Analysis(display, sorted((printable_finding(from_diagnostic(d)) for d in exc.diagnostics),
                                        key=sort_key))
    derived = Derived(topology)
    with stage(f"{display}: derive and check"):     # derived facts are computed as the rules ask for them
        findings = run_rules(topology, derived, today=run.today, severity_overrides=run.severity,
                             repo_waivers=run.waivers_for(path))
    return Analysis(display, [printable_finding(f) for f in findings], topology, derived)
