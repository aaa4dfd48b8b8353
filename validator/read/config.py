"""The repository configuration file `.clusterplan.yaml`: severity overrides for every design and the
generated files the repository commits (checked by `clusterplan outputs` and its pre-commit hook).

    severity: {TRN009: warning}
    outputs:
      - design: designs/cluster.yaml
        bom: generated/cluster.bom.json       # format from the suffix: .json .csv .md .txt .xlsx
        cabling: generated/cluster.cabling.csv
        render: generated/cluster/            # a directory for `clusterplan render`
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from validator.base.errors import DesignError, Diagnostic
from validator.read.loader import load_yaml, read_text

CONFIG_NAME = ".clusterplan.yaml"


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    design: str = Field(description="Design file, relative to the configuration file.")
    bom: str | None = Field(None, description="BOM file; format from the suffix.")
    cabling: str | None = Field(None, description="Cabling plan file (.csv, .json or .xlsx).")
    render: str | None = Field(None, description="Directory for the rendered configurations.")


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    severity: dict[str, Literal["error", "warning", "info", "off"]] = Field(default_factory=dict)
    outputs: list[Output] = Field(default_factory=list)


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
