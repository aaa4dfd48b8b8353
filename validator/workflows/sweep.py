"""`clusterplan sweep`: one design, many what-ifs. Each `--set PATH=V1,V2,...` names a field of the design
and its values; the grid is their cartesian product (or, with `zip`, the values side by side). Every point
is the design with those values, analysed in full (validate, estimate, BOM and cost) exactly as
`clusterplan validate/estimate/bom` would analyse that design written to a file, on a process pool of the
standard library; rows come back in grid order whatever the pool does.

Paths are dotted field names of the design format (`fabrics.compute.speed_gbps`, `compute.count`,
`waivers[0].expires` or `waivers.0.expires`), checked against the design model before anything runs; values
are YAML scalars. The grid is bounded (validator/data/planning.yaml `max_sweep_points`): designs arrive in
pull requests, and so may sweep commands in CI.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
import types
import typing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from validator.base.errors import DesignError, ToolError, format_path
from validator.base.facts import fact
from validator.base.paths import display_name
from validator.base.tables import planning
from validator.check.result import Analysis
from validator.pipeline import analyze
from validator.read.config import RunConfig
from validator.read.loader import load_yaml, read_text
from validator.read.model import Design

Key = str | int
_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[[0-9]+\])*)$")
_INDEX = re.compile(r"\[([0-9]+)\]")
MAX_SETTINGS = 16


@fact
class Setting:
    """One `--set PATH=V1,V2,...`: the path as written, as keys, and its values."""

    text: str
    path: tuple[Key, ...]
    values: tuple[Any, ...]


def max_points() -> int:
    return planning().max_sweep_points


def parse_setting(arg: str) -> Setting:
    """`PATH=V1,V2,...` -> Setting; the path's syntax only (check_path checks it against the model)."""
    text, sep, raw = arg.partition("=")
    text = text.strip()
    if not sep or not text or not raw.strip():
        raise ToolError(f"--set {arg!r}: expected PATH=V1,V2,... (e.g. fabrics.compute.speed_gbps=400,800)")
    keys: list[Key] = []
    for part in text.split("."):
        m = _SEGMENT.match(part)
        if m is None:
            raise ToolError(f"--set {text}: {part!r} is not a field name or list index (letters, digits, _ and - "
                            "only; list items as name[0] or name.0)")
        keys.append(m.group(1))
        keys += [int(i) for i in _INDEX.findall(m.group(2))]
    values = tuple(_value(text, v) for v in raw.split(","))
    return Setting(text, tuple(keys), values)


def _value(path: str, text: str) -> Any:
    try:
        value = load_yaml(text.strip(), "--set").data if text.strip() else None
    except DesignError as exc:
        raise ToolError(f"--set {path}: value {text!r}: {exc.diagnostics[0].message}") from None
    if value is None or isinstance(value, dict | list):
        raise ToolError(f"--set {path}: value {text!r} is not a scalar (a number, a word or true/false)")
    return value


# ---------------------------------------------------------------- paths, checked against the design model


def check_path(setting: Setting, data: Any) -> tuple[Key, ...]:
    """The setting's keys with list indices as ints, after checking each against the design model and the
    design's lists (an index must exist). Raises ToolError naming the first wrong part."""
    tp: Any = Design
    out: list[Key] = []
    node = data
    for i, key in enumerate(setting.path):
        where = format_path(setting.path[: i + 1])
        tp, key = _step(tp, key, setting.text, where)
        if isinstance(key, int) and (not isinstance(node, list) or key >= len(node)):
            size = len(node) if isinstance(node, list) else 0
            raise ToolError(f"--set {setting.text}: {where}: the design has {size} item(s) there; a sweep "
                            "changes items, it does not add them")
        out.append(key)
        node = node[key] if isinstance(key, int) else node.get(key) if isinstance(node, dict) else None
    if _model_of(tp) is not None or _origin_is(tp, (list, dict)):
        raise ToolError(f"--set {setting.text}: names a section, not a value; name one of its fields")
    return tuple(out)


def _step(tp: Any, key: Key, text: str, where: str) -> tuple[Any, Key]:
    model = _model_of(tp)
    if model is not None:
        fields = {(f.alias or name): f.annotation for name, f in model.model_fields.items()}
        fields.update({name: f.annotation for name, f in model.model_fields.items()})
        if isinstance(key, int) or key not in fields:
            raise ToolError(f"--set {text}: {where}: no such field; {model.__name__} has "
                            f"{', '.join(sorted({f.alias or n for n, f in model.model_fields.items()}))}")
        return fields[key], key
    inner = _unwrap(tp)
    origin, args = typing.get_origin(inner), typing.get_args(inner)
    if origin is list:
        if isinstance(key, str) and not key.isdigit():
            raise ToolError(f"--set {text}: {where}: a list is indexed by a number, e.g. name[0]")
        return args[0], int(key)
    if origin is dict:
        return args[1], str(key)
    raise ToolError(f"--set {text}: {where}: {where.rsplit('.', 1)[0]} is a value; it has no field {key}")


def _unwrap(tp: Any) -> Any:
    """The type inside Annotated[...] and `X | None`."""
    while True:
        if typing.get_origin(tp) is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
            options = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = options[0]
        else:
            return tp


def _model_of(tp: Any) -> type[BaseModel] | None:
    inner = _unwrap(tp)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def _origin_is(tp: Any, origins: tuple[type, ...]) -> bool:
    return typing.get_origin(_unwrap(tp)) in origins


def apply(data: Any, changes: list[tuple[tuple[Key, ...], Any]]) -> Any:
    """A copy of the design data with each (path, value) set; missing sections on the way are created."""
    out = copy.deepcopy(data)
    for path, value in changes:
        node = out
        for key in path[:-1]:
            if isinstance(key, int):
                node = node[key]
            else:
                if not isinstance(node.get(key), dict | list):
                    node[key] = {}
                node = node[key]
        node[path[-1]] = value
    return out


# ---------------------------------------------------------------- the grid and its rows


def grid(settings: list[Setting], zipped: bool) -> list[tuple[Any, ...]]:
    """The points: the cartesian product of the values (first --set slowest), or with `zipped` the i-th
    value of each. Bounded by max_sweep_points before anything is built."""
    if not settings:
        raise ToolError("give at least one --set PATH=V1,V2,...")
    if len(settings) > MAX_SETTINGS:
        raise ToolError(f"{len(settings)} --set options; at most {MAX_SETTINGS}")
    sizes = [len(s.values) for s in settings]
    if zipped and len(set(sizes)) != 1:
        raise ToolError("--zip needs the same number of values in every --set (got "
                        f"{', '.join(f'{s.text}: {len(s.values)}' for s in settings)})")
    count = sizes[0] if zipped else math.prod(sizes)
    if count > max_points():
        raise ToolError(f"the grid has {count:,} points; the limit is {max_points():,} (validator/data/planning.yaml "
                        "max_sweep_points): sweep fewer values, or split the grid (docs/planning.md)")
    values = [s.values for s in settings]
    return list(zip(*values, strict=True)) if zipped else list(itertools.product(*values))


@fact
class Task:
    """One point, as a worker process receives it."""

    design: Path
    display: str
    data: Any
    changes: tuple[tuple[tuple[Key, ...], Any], ...]
    run: RunConfig


@dataclass
class Sweep:
    design: str
    kind: str
    settings: list[Setting]
    zipped: bool
    rows: list[dict[str, Any]]


def load_base(design: Path) -> Any:
    try:
        return load_yaml(read_text(design, display_name(design)), display_name(design)).data
    except DesignError as exc:
        raise ToolError(str(exc)) from None


def sweep(design: Path, settings: list[Setting], *, zipped: bool = False, jobs: int | None = None,
          run: RunConfig | None = None,
          progress: Callable[[Iterator[dict[str, Any]], int], Iterator[dict[str, Any]]] | None = None) -> Sweep:
    """Every point of the grid analysed; rows in grid order. `jobs`: worker processes (default: every core
    this process may use; 1 runs in this process). `progress` wraps the row iterator (a progress bar)."""
    run = run or RunConfig()
    data = load_base(design)
    if not isinstance(data, dict):
        raise ToolError(f"{display_name(design)}: not a design (a YAML mapping)")
    paths = [check_path(s, data) for s in settings]
    points = grid(settings, zipped)
    display = display_name(design)
    tasks = [Task(design, display, data, tuple(zip(paths, point, strict=True)), run) for point in points]
    workers = max(1, min(jobs or available_cores(), len(tasks)))
    wrap = progress or (lambda rows, _total: rows)
    if workers == 1:
        rows = list(wrap((run_point(t) for t in tasks), len(tasks)))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            rows = list(wrap(pool.map(run_point, tasks, chunksize=max(1, len(tasks) // (workers * 8))), len(tasks)))
    for i, (row, point) in enumerate(zip(rows, points, strict=True)):
        row.update({"point": i + 1, **{s.text: v for s, v in zip(settings, point, strict=True)}})
    return Sweep(display, str(data.get("kind", "")), settings, zipped, rows)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def run_point(task: Task) -> dict[str, Any]:
    """One point: the modified design analysed as `clusterplan validate/estimate/bom` would analyse it."""
    text = yaml.safe_dump(apply(task.data, list(task.changes)), sort_keys=False, allow_unicode=True)
    return row_of(analyze(task.design, task.display, task.run, text=text))


def row_of(analysis: Analysis) -> dict[str, Any]:
    """The sweep's columns of one analysed design (docs/planning.md says what each one is)."""
    from validator.workflows.diff import metrics_of

    active = [f for f in analysis.findings if not f.waived]
    m = metrics_of(analysis)
    row: dict[str, Any] = {
        "errors": int(m["errors"] or 0), "warnings": int(m["warnings"] or 0),
        "error_rules": " ".join(sorted({f.rule for f in active if f.severity == "error"})),
    }
    for key in ("gpus", "servers", "switches", "it_kw", "facility_kw", "gpu_hour_usd"):
        row[key] = m.get(key)
    unpriced = m.get("unpriced_lines")
    row["capex_usd"] = m.get("capex") if unpriced == 0 else None
    row["unpriced_lines"] = unpriced
    for key in PERFORMANCE:
        row[key] = m.get(key)
    row["idle_gpus"] = _idle_gpus(analysis)
    if analysis.derived is not None and m.get("mfu") is not None:
        per_gpu = analysis.derived.estimate.as_dict()["tokens_per_s_per_gpu"]
        row["cost_per_million_tokens"] = training_cost_per_million(m.get("gpu_hour_usd"), per_gpu)
    row["withheld"] = bool(row["errors"])
    if row["withheld"]:     # a point that fails its rules is marked, not measured
        for key in PERFORMANCE:
            row[key] = None
    return row


# the figures a point with error findings does not show: they would describe a cluster that cannot run
PERFORMANCE = ("mfu", "tokens_per_s", "time_to_train_days", "output_tokens_per_s_per_gpu", "ttft_ms", "tpot_ms",
               "replicas_needed", "cost_per_million_tokens")


def _idle_gpus(analysis: Analysis) -> int | None:
    """GPUs the training job does not use (TRN011): a sweep over compute.count whose tokens/s stay the same
    says why in this column."""
    topo = analysis.topology
    training = topo.resolved.design.training if topo is not None else None
    if topo is None or training is None:
        return None
    p = training.parallelism
    return max(0, topo.gpus - p.tp * p.pp * p.dp * p.cp)


def training_cost_per_million(gpu_hour_usd: float | None, tokens_per_s_per_gpu: float | None) -> float | None:
    """Cost of training on a million tokens: a busy GPU-hour's cost over the tokens one GPU trains in an hour."""
    if gpu_hour_usd is None or not tokens_per_s_per_gpu:
        return None
    return gpu_hour_usd / (tokens_per_s_per_gpu * 3600 / 1e6)
