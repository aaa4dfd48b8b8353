"""Read a sizing request (with the command line's overrides) and write the designs `clusterplan size` chose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.base.errors import DesignError, ToolError
from validator.base.paths import display_name
from validator.read.sizing import SizingRequest, read_request
from validator.resolve.catalog import Catalog, builtin_catalog
from validator.workflows.size_rank import OBJECTIVES, SizeResult, design_name, design_text


def load_request(path: Path) -> tuple[SizingRequest, Catalog]:
    """The request and the catalog it is sized from (the built-in one); every problem at once, as a usage error."""
    if not path.is_file():
        raise ToolError(f"{path}: no such sizing request")
    try:
        request = read_request(path, display_name(path))
    except DesignError as exc:
        raise ToolError("the sizing request is not valid:\n" + "\n".join(
            f"  {d.file}:{d.line}:{d.col}: {d.code} {d.message}" + (f" ({d.hint})" if d.hint else "")
            for d in exc.diagnostics)) from None
    return request, builtin_catalog()


def override(request: SizingRequest, *, servers: list[str] | None = None, max_gpus: int | None = None,
             budget_usd: float | None = None, deadline_days: float | None = None, qps: float | None = None,
             top: int | None = None) -> SizingRequest:
    """The request with the command line's values in place of its own (validated like the file's)."""
    data: dict[str, Any] = request.model_dump(by_alias=True, exclude_unset=True)
    limits = data["constraints"]
    for key, value in (("servers", servers), ("max_gpus", max_gpus), ("budget_usd", budget_usd)):
        if value:
            limits[key] = value
    if deadline_days is not None:
        if "training" not in data:
            raise ToolError("--deadline-days is for a training request")
        data["training"]["deadline_days"] = deadline_days
    if qps is not None:
        if "inference" not in data:
            raise ToolError("--qps is for an inference request")
        data["inference"].setdefault("targets", {})["qps"] = qps
    if top is not None:
        data["top"] = top
    try:
        return SizingRequest.model_validate(data)
    except ValueError as exc:
        raise ToolError(f"the command line makes the request invalid: {exc}") from None


def write_designs(result: SizeResult, directory: Path) -> dict[str, str]:
    """The best design of each objective as DIR/NAME-OBJECTIVE.yaml (written atomically); by objective."""
    from validator.emit.files import write_atomic

    if directory.exists() and not directory.is_dir():
        raise ToolError(f"{directory}: not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for objective in OBJECTIVES:
        if not result.best[objective]:
            continue
        path = directory / f"{design_name(result.request, objective)}.yaml"
        write_atomic(path, design_text(result, result.best[objective][0], objective))
        written[objective] = path.as_posix()
    return written
