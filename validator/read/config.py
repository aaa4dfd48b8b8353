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
          support_pct_per_year: 12}           # a design's own figures win over these
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from validator.base.errors import DesignError, Diagnostic
from validator.read.loader import load_yaml, read_text
from validator.read.model import Waiver

CONFIG_NAME = ".clusterplan.yaml"


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    design: str = Field(description="Design file, relative to the configuration file.")
    bom: str | None = Field(None, description="BOM file; format from the suffix.")
    cabling: str | None = Field(None, description="Cabling plan file (.csv, .json or .xlsx).")
    render: str | None = Field(None, description="Directory for the rendered configurations.")


class RepoWaiver(Waiver):
    design: str | None = Field(None, max_length=500, description="Glob of design paths (relative to the "
                               "configuration file) the waiver is limited to; default: every design.")


class RepoTco(BaseModel):
    """Cost-of-ownership inputs for every design of the repository (defaults: validator/data/defaults.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    electricity_usd_per_kwh: float | None = Field(None, ge=0, le=10)
    pue: float | None = Field(None, ge=1, le=5)
    utilization: float | None = Field(None, gt=0, le=1, description="Share of the year the GPUs are busy.")
    depreciation_years: float | None = Field(None, gt=0, le=30)
    support_pct_per_year: float | None = Field(None, ge=0, le=100)


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    severity: dict[str, Literal["error", "warning", "info", "off"]] = Field(default_factory=dict)
    waivers: list[RepoWaiver] = Field(default_factory=list)
    outputs: list[Output] = Field(default_factory=list)
    prices: list[str] = Field(default_factory=list, description="Price books, relative to this file, inside the "
                              "repository; later ones override earlier ones.")
    tco: RepoTco = Field(default_factory=RepoTco)


@dataclass(frozen=True)
class RunConfig:
    """What one run of clusterplan takes from its command line and `.clusterplan.yaml`. Every command
    builds one and passes it down, so `validate`, `diff`, the workbook and the report cannot disagree
    on severities or waivers."""

    repo: RepoConfig = field(default_factory=RepoConfig)
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
    for parent in (start.resolve(), *start.resolve().parents):
        candidate = parent / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (parent / ".git").exists():
            return None
    return None


def load_config(path: Path) -> RepoConfig:
    display = str(path)
    loaded = load_yaml(read_text(path, display), display)
    try:
        return RepoConfig.model_validate(loaded.data or {})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
            line, col = loaded.where(loc)
            problems.append(Diagnostic("CFG001", f"{'.'.join(map(str, loc))}: {err['msg']}", display, line, col, loc,
                                       "see the .clusterplan.yaml format in docs/integrations.md"))
        raise DesignError(problems) from None
