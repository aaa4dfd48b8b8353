"""The repository configuration file `.clusterplan.yaml` and the `RunConfig` every command is given.

`.clusterplan.yaml` holds what applies to every design of the repository: severity overrides, waivers
(optionally limited to designs matching a glob) and the generated files the repository commits
(checked by `clusterplan outputs` and its pre-commit hook). A design's own `severity:` and `waivers:`
come first; the repository's apply where the design says nothing.

    severity: {TRN009: warning}
    waivers:
      - {rule: TRN002, design: "designs/zones-*.yaml", reason: "taper above the zones", owner: net-arch}
    outputs:
      - design: designs/cluster.yaml
        bom: generated/cluster.bom.json       # format from the suffix: .json .csv .md .txt .xlsx
        cabling: generated/cluster.cabling.csv
        render: generated/cluster/            # a directory for `clusterplan render`
    prices: [prices/acme-quote.yaml]          # price books, later ones win (schemas/pricebook.schema.json)
    tco: {electricity_usd_per_kwh: 0.11, pue: 1.3, utilization: 0.85, depreciation_years: 5,
          support_pct_per_year: 12, support_pct_dgx: 20, expected_draw_fraction: 0.735,
          colocation_usd_per_kw_month: 196, cost_of_capital_pct: 8, staff_usd_per_year: 0}
                                              # a design's own figures win over these; defaults and
                                              # their sources: validator/data/defaults.yaml
"""

import difflib
from collections.abc import Collection
from dataclasses import field
from datetime import date
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from validator.base.errors import DesignError, Diagnostic, format_path
from validator.base.facts import fact
from validator.base.paths import confine, display_name, repository_root
from validator.read.loader import Loaded, load_yaml, read_text
from validator.read.model import Waiver
from validator.read.names import FilePath, RuleId

CONFIG_NAME = ".clusterplan.yaml"


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    design: FilePath = Field(description="Design file, relative to the configuration file.")
    bom: FilePath | None = Field(None, description="BOM file; format from the suffix.")
    cabling: FilePath | None = Field(None, description="Cabling plan file (.csv, .json or .xlsx).")
    render: FilePath | None = Field(None, description="Directory for the rendered configurations.")


class RepoWaiver(Waiver):
    design: str | None = Field(None, max_length=500, description="Glob of design paths (relative to the "
                               "configuration file) the waiver is limited to; default: every design.")


class RepoTco(BaseModel):
    """Cost-of-ownership inputs for every design of the repository (defaults: validator/data/defaults.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    electricity_usd_per_kwh: float | None = Field(None, ge=0, le=10)
    pue: float | None = Field(None, ge=1, le=5)
    utilization: float | None = Field(None, gt=0, le=1, description="Share of the year the GPUs are busy.")
    depreciation_years: float | None = Field(None, gt=0, le=30)
    support_pct_per_year: float | None = Field(None, ge=0, le=100, description="Support per year, % of the capex of "
                                               "every part but DGX systems.")
    support_pct_dgx: float | None = Field(None, ge=0, le=100, description="Support per year, % of the price of "
                                          "NVIDIA DGX systems (default ~20 %).")
    expected_draw_fraction: float | None = Field(None, gt=0, le=1, description="Typical draw as a share of the IT "
                                                 "maximum; energy is charged at max x this x utilization.")
    colocation_usd_per_kw_month: float | None = Field(None, ge=0, le=10000, description="Colocation or facility "
                                                      "charge per kW of IT maximum per month (0: owned site).")
    cost_of_capital_pct: float | None = Field(None, ge=0, le=100, description="Cost of capital per year, % "
                                              "(the capex is charged as an annuity over the depreciation years).")
    staff_usd_per_year: float | None = Field(None, ge=0, le=1e10, description="Operations staff per year.")


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    severity: dict[RuleId, Literal["error", "warning", "info", "off"]] = Field(default_factory=dict)
    waivers: list[RepoWaiver] = Field(default_factory=list)
    outputs: list[Output] = Field(default_factory=list)
    prices: list[str] = Field(default_factory=list, description="Price books, relative to this file, inside the "
                              "repository; later ones override earlier ones.")
    tco: RepoTco = Field(default_factory=RepoTco)


# A repository without .clusterplan.yaml: the defaults, built without validating (an equal
# `RepoConfig()` would build the models' schemas, a few ms of every cold start; tests/test_trusted.py
# checks they are the same).
NO_CONFIG = RepoConfig.model_construct(tco=RepoTco.model_construct())


def tco_settings(config: RepoConfig) -> dict[str, float]:
    """The TCO figures the configuration sets (by name)."""
    return {name: float(value) for name in RepoTco.model_fields
            if (value := getattr(config.tco, name)) is not None}


@fact
class RunConfig:
    """What one run of clusterplan takes from its command line and `.clusterplan.yaml`. Every command
    builds one and passes it down, so `validate`, `diff`, the workbook and the report cannot disagree
    on severities or waivers."""

    repo: RepoConfig = field(default_factory=lambda: NO_CONFIG)
    config_path: Path | None = None
    today: date | None = None
    price_files: tuple[Path, ...] = ()     # --prices FILE, in order: they override the repository's books

    @property
    def severity(self) -> dict[str, str]:
        return dict(self.repo.severity)

    def waivers_for(self, design: Path | None) -> list[Waiver]:
        """The repository's waivers that apply to one design file."""
        out: list[Waiver] = []
        base = self.config_path.parent if self.config_path else Path.cwd()
        for w in self.repo.waivers:
            if w.design is None or (design is not None and _matches(design, base, w.design)):
                out.append(Waiver(rule=w.rule, path=w.path, reason=w.reason, owner=w.owner, expires=w.expires))
        return out


def _matches(design: Path, base: Path, pattern: str) -> bool:
    try:
        rel = design.resolve().relative_to(base.resolve())
    except ValueError:
        return False
    return rel.match(pattern)


def find_config(start: Path) -> Path | None:
    """The `.clusterplan.yaml` of the repository `start` is in (from here up to the git root). One that
    is a symlink out of the repository is an error (OutsideRepository): it could point anywhere."""
    for parent in (start.resolve(), *start.resolve().parents):
        candidate = parent / CONFIG_NAME
        if candidate.is_file() or candidate.is_symlink():
            confine(candidate, repository_root(candidate), "repository configuration")
            return candidate
        if (parent / ".git").exists():
            return None
    return None


def load_config(path: Path, known_rules: Collection[str] = ()) -> RepoConfig:
    """The repository configuration; every problem at once (unknown keys with did-you-mean, and
    severities for rules that do not exist when `known_rules` is given)."""
    display = display_name(path)
    loaded = load_yaml(read_text(path, display), display)
    try:
        config = RepoConfig.model_validate(loaded.data or {})
    except ValidationError as exc:
        raise DesignError([_problem(err, loaded, display) for err in exc.errors()]) from None
    problems = []
    for rule_id in config.severity if known_rules else ():
        if rule_id not in known_rules:
            line, col = loaded.where(("severity", rule_id), key=True)
            close = difflib.get_close_matches(rule_id, list(known_rules), n=1, cutoff=0.6)
            problems.append(Diagnostic("CFG001", f"unknown rule '{rule_id}' in severity", display, line, col,
                                       ("severity", rule_id), f"did you mean '{close[0]}'?" if close else
                                       "`clusterplan rules` lists the rule IDs"))
    if problems:
        raise DesignError(problems)
    return config


def _problem(err: Any, loaded: Loaded, display: str) -> Diagnostic:
    loc = tuple(p for p in err["loc"] if isinstance(p, str | int) and p != "[key]")
    if err["type"] == "extra_forbidden" and loc:
        line, col = loaded.where(loc, key=True)
        allowed = _fields_at(RepoConfig, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
        return Diagnostic("CFG001", f"unknown key '{loc[-1]}' in {format_path(loc[:-1])}", display, line, col, loc,
                          f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}")
    if "[key]" in err["loc"] and loc:
        line, col = loaded.where(loc, key=True)
        return Diagnostic("CFG001", f"key '{loc[-1]}' in {format_path(loc[:-1])} is not valid: {err['msg']}",
                          display, line, col, loc, "rule IDs are three capital letters and three digits, e.g. NET002")
    line, col = loaded.where(loc)
    return Diagnostic("CFG001", f"{format_path(loc)}: {err['msg']}", display, line, col, loc,
                      "see the .clusterplan.yaml format in docs/integrations.md")


def _fields_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys allowed at `loc` of a configuration (list indexes skipped)."""
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        inner = _model_in(info.annotation) if info is not None else None
        if inner is None:
            return []
        model = inner
    return sorted(model.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        if (found := _model_in(arg)) is not None:
            return found
    return None
