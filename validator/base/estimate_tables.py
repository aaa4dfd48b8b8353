"""The estimator's data tables (validator/data/precision.yaml, serving.yaml, intervals.yaml,
efficiency.yaml), each read once into a typed record, as validator/base/tables.py does for the others.
The estimator (validator/derive/estimate/) reads their fields, never `load_data()`. Keys are the tables'
own: a key added to a table is added to its record here."""

from __future__ import annotations

from functools import cache
from typing import Any

from validator.base.facts import fact
from validator.base.resources import load_data
from validator.base.tables import sourced, value, values


@fact
class Precision:
    """Number formats (validator/data/precision.yaml): bytes per value, and vLLM's KV block size."""

    bytes: dict[str, float]        # format -> bytes per value
    vllm_block_size: int           # tokens per paged-KV block


@cache
def precision() -> Precision:
    return Precision({str(k): float(v) for k, v in value("precision.yaml", "bytes").items()},
                     int(sourced("precision.yaml")["vllm_block_size"].value))


@fact
class ErrorClass:
    """One class of held-out errors r = published / estimated (validator/data/intervals.yaml): its quantiles
    `low` and `high` at the percentiles `level`, over `n` published runs."""

    n: int
    low: float
    high: float
    level: tuple[float, float]


@fact
class Envelope:
    """What the fitted runs of one kind span: a range per number, the values seen per category."""

    ranges: dict[str, tuple[float, float]]
    categories: dict[str, tuple[str, ...]]


@fact
class HeldOut:
    """The held-out errors of one kind of estimate (training or serving), by class, and its envelope."""

    classes: dict[str, ErrorClass]
    envelope: Envelope


def _held_out(data: dict[str, Any]) -> HeldOut:
    classes = {str(k): ErrorClass(int(c["n"]), float(c["low"]), float(c["high"]),
                                  (float(c["level"][0]), float(c["level"][1])))
               for k, c in data["classes"].items()}
    env = data["envelope"]
    categories = {str(k): tuple(str(x) for x in v) for k, v in env.items() if all(isinstance(x, str) for x in v)}
    ranges = {str(k): (float(v[0]), float(v[1])) for k, v in env.items() if k not in categories}
    return HeldOut(classes, Envelope(ranges, categories))


@cache
def intervals() -> dict[str, HeldOut]:
    """The held-out errors behind every estimate's intervals (validator/data/intervals.yaml, written by
    benchmarks/intervals.py), by kind: training, serving."""
    data = load_data("intervals.yaml")
    return {kind: _held_out(data[kind]) for kind in ("training", "serving")}


Setting = int | float | bool | str | None


@fact
class EngineDefault:
    """One scheduler default of a serving engine (validator/data/serving.yaml `engines`): its value on a
    large GPU and on a small one (the same when the engine does not tell them apart)."""

    value: Setting
    small_gpu_value: Setting
    source: str

    def on(self, large: bool) -> Setting:
        return self.value if large else self.small_gpu_value


@fact
class ServingDefaults:
    """The serving estimate's defaults (validator/data/serving.yaml; its hours per year are read by
    validator/base/tables.py `hours_per_year()`, for the cost)."""

    engines: dict[str, dict[str, EngineDefault]]     # engine -> setting -> default
    large_gpu_gib: float                             # the larger engine defaults from this much HBM
    slo_percentile_z: float                          # standard normal quantile of the p99


@cache
def serving() -> ServingDefaults:
    data = load_data("serving.yaml")

    def default(entry: dict[str, Any]) -> EngineDefault:
        return EngineDefault(entry["value"], entry.get("small_gpu_value", entry["value"]), str(entry["source"]))

    engines = {str(name): {str(k): default(e) for k, e in table.items()} for name, table in data["engines"].items()}
    v = values("serving.yaml")
    return ServingDefaults(engines, float(v["large_gpu_gib"]), float(v["slo_percentile_z"]))


@fact
class TrainingTable:
    """The training estimator's constants (validator/data/efficiency.yaml `training`): the fitted sets by
    "gpu/precision", the constants every set shares, the prior, the physical bounds, and who lends its set
    to a GPU or precision without published runs. A set's keys are the fit's own (benchmarks/calibrate.py)."""

    bounds: dict[str, tuple[float, float]]
    prior: dict[str, float]
    shared: dict[str, float]
    uncalibrated_uncertainty: float
    precision_alias: dict[str, str]
    precision_lenders: dict[str, str]
    lenders: dict[str, str]
    sets: dict[str, dict[str, float]]
    source: str
    tensor_flops_per_exp: dict[str, float]   # by GPU: 16-bit tensor peak / softmax exp rate (none: no exp bound)


@fact
class ServingEfficiency:
    """The serving step model's constants (validator/data/efficiency.yaml `serving`): a fitted set per GPU
    family (keys as the table's), which family each GPU uses, and the collective latencies."""

    gpus: dict[str, dict[str, float]]
    family: dict[str, str]
    default_family: str
    allreduce_latency_us: float
    ep_latency_us: float
    ep_exposed: float
    source: str
    flashmla: dict[str, tuple[float, float]]     # family -> (share of the 16-bit peak, share of HBM bandwidth)


@fact
class Efficiency:
    """validator/data/efficiency.yaml: training and serving constants, communication efficiencies and
    latencies (by name), and GPU-to-host bandwidth in GB/s per direction (by GPU, else `default`)."""

    training: TrainingTable
    serving: ServingEfficiency
    communication: dict[str, float]
    host_link: dict[str, float]


def _floats(table: dict[str, Any]) -> dict[str, float]:
    return {str(k): float(v) for k, v in table.items()}


def _names(table: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in table.items()}


def _training_table(t: dict[str, Any]) -> TrainingTable:
    return TrainingTable({str(k): (float(v[0]), float(v[1])) for k, v in t["bounds"].items()},
                         _floats(t["prior"]), _floats(t["shared"]), float(t["uncalibrated_uncertainty"]),
                         _names(t["precision_alias"]), _names(t["precision_lenders"]), _names(t["lenders"]),
                         {str(k): _floats(v) for k, v in t["sets"].items()}, str(t["source"]),
                         _floats(t["softmax_exp"]["tensor_flops_per_exp"]))


@cache
def efficiency() -> Efficiency:
    data = load_data("efficiency.yaml")
    s = data["serving"]
    serving_table = ServingEfficiency({str(k): _floats(v) for k, v in s["gpus"].items()}, _names(s["family"]),
                                      str(s["default_family"]), float(s["allreduce_latency_us"]["value"]),
                                      float(s["ep_latency_us"]["value"]), float(s["ep_exposed"]["value"]),
                                      str(s["source"]),
                                      {str(k): (float(v["compute"]), float(v["memory"]))
                                       for k, v in s.get("flashmla", {}).items()})
    communication = _floats(values("efficiency.yaml", "communication"))
    return Efficiency(_training_table(data["training"]), serving_table, communication,
                      _floats(values("efficiency.yaml", "host_link")))
