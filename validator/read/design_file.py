"""Stages 1-3 for one file: YAML with positions -> structural schema check -> pydantic model.

Every problem of a stage is reported at once; a later stage runs only on a clean earlier one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from pydantic import ValidationError

from validator.base.errors import DesignError, Diagnostic, Path, format_path
from validator.read.loader import Loaded, load_yaml, read_text
from validator.read.model import API_VERSION, Design
from validator.read.schema import check_structure


def read_design(path: FsPath, display: str) -> tuple[Loaded, Design]:
    return parse_design(read_text(path, display), display)


def parse_design(text: str, display: str) -> tuple[Loaded, Design]:
    """A design from its text: YAML with positions, the schema check and the cross-field checks."""
    loaded = load_yaml(text, display)
    _check_header(loaded)
    design = _fast_valid(loaded.data)
    if design is None:
        problems = check_structure(loaded)
        if problems:
            raise DesignError(problems)
        try:
            design = Design.model_validate(loaded.data)
        except ValidationError as exc:
            raise DesignError(_pydantic_problems(exc, loaded)) from None
    problems = cross_checks(design, loaded)
    if problems:
        raise DesignError(problems)
    return loaded, design


def _fast_valid(data: Any) -> Design | None:
    """The model of a document that is certainly valid, without loading jsonschema (start-up time).

    Strict JSON-mode pydantic accepts exactly what the generated schema accepts, except null, which
    the schema forbids for optional keys: a document with a null anywhere takes the full path. When
    this returns None, the schema check runs and reports every structural problem.
    """
    if _has_null(data):
        return None
    try:
        return Design.model_validate_json(json.dumps(data), strict=True)
    except (ValidationError, TypeError, ValueError):
        return None


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def is_design(loaded: Loaded) -> bool:
    return isinstance(loaded.data, dict) and str(loaded.data.get("apiVersion", "")).startswith("clusterplan/")


def _check_header(loaded: Loaded) -> None:
    data = loaded.data
    if not isinstance(data, dict):
        return
    version = data.get("apiVersion")
    if version is not None and version != API_VERSION:
        line, col = loaded.where(("apiVersion",))
        raise DesignError([Diagnostic("SCH002", f"apiVersion {version!r} is not supported", loaded.file, line, col,
                                      ("apiVersion",), f"this clusterplan reads `apiVersion: {API_VERSION}`")])


def _pydantic_problems(exc: ValidationError, loaded: Loaded) -> list[Diagnostic]:
    out = []
    for err in exc.errors():
        path: Path = tuple(p for p in err["loc"] if isinstance(p, str | int))
        line, col = loaded.where(path)
        out.append(Diagnostic("SCH003", f"{format_path(path)}: {err['msg']}", loaded.file, line, col, path,
                              "see docs/design-format.md"))
    return out


Add = Callable[..., None]


def cross_checks(design: Design, loaded: Loaded) -> list[Diagnostic]:
    """Rules between fields that a JSON Schema cannot say clearly."""
    out: list[Diagnostic] = []

    def add(path: Path, message: str, hint: str, *, key: bool = False) -> None:
        line, col = loaded.where(path, key=key)
        out.append(Diagnostic("SCH004", message, loaded.file, line, col, path, hint))

    _kind_sections(design, add)
    _inference_fields(design, add)
    _fabric_units(design, add)
    return out


def _kind_sections(design: Design, add: Add) -> None:
    if design.kind == "TrainingCluster":
        if design.training is None:
            add(("kind",), "kind TrainingCluster needs a `training:` section", "add `training:` with the model, "
                "parallelism and batch")
        if design.inference is not None:
            add(("inference",), "a TrainingCluster has no `inference:` section",
                "remove it, or use kind: InferenceFleet", key=True)
    else:
        if design.inference is None:
            add(("kind",), "kind InferenceFleet needs an `inference:` section", "add `inference:` with the "
                "model, replica shape and token lengths")
        if design.training is not None:
            add(("training",), "an InferenceFleet has no `training:` section",
                "remove it, or use kind: TrainingCluster", key=True)


def _inference_fields(design: Design, add: Add) -> None:
    inf = design.inference
    if inf is None:
        return
    if inf.replicas is None and inf.autoscaling is None and inf.disaggregation is None:
        add(("inference",), "the fleet size is not given", "set `replicas:` or `autoscaling: {min, max}`")
    if inf.replicas is not None and inf.autoscaling is not None:
        add(("inference", "autoscaling"), "`replicas` and `autoscaling` are both set", "keep one", key=True)
    if inf.autoscaling and inf.autoscaling.min > inf.autoscaling.max:
        add(("inference", "autoscaling", "min"), f"autoscaling min {inf.autoscaling.min} is above max "
            f"{inf.autoscaling.max}", "swap them")
    if inf.prompt_tokens + inf.output_tokens > inf.max_context_tokens:
        add(("inference", "max_context_tokens"), f"prompt_tokens + output_tokens = "
            f"{inf.prompt_tokens + inf.output_tokens} exceeds max_context_tokens {inf.max_context_tokens}",
            "raise max_context_tokens or shorten the requests")


def _fabric_units(design: Design, add: Add) -> None:
    for name in ("compute", "storage", "inband", "oob"):
        fab = getattr(design.fabrics, name)
        if fab is None:
            continue
        if fab.tiers.core is not None and fab.tiers.spine is None:
            add(("fabrics", name, "tiers", "core"), "a core tier needs a spine tier", "add `spine:`", key=True)
        for key, unit, fields in (("pod", fab.pod, ("servers", "gpus")),
                                  ("scalable_unit", fab.scalable_unit, ("servers", "racks"))):
            if unit is not None and sum(getattr(unit, f) is not None for f in fields) != 1:
                add(("fabrics", name, key), f"`{key}` takes exactly one of {' or '.join(fields)}",
                    f"e.g. `{key}: {{{fields[0]}: 32}}`", key=True)
        if fab.pod is not None and fab.tiers.core is None:
            add(("fabrics", name, "pod"), "pods (zones) meet at a core tier, which this fabric does not have",
                "add `core:` under tiers, or remove `pod`", key=True)
