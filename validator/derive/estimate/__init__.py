"""Performance and memory estimates of a design (`clusterplan estimate`, the latency and memory
rules, the BOM summary). Shape of the JSON: schemas/estimate.schema.json."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from validator.base.facts import fact
from validator.derive.estimate.engine import serving_constants
from validator.derive.estimate.goodput import Goodput
from validator.derive.estimate.hardware import gbps_per_gpu
from validator.derive.estimate.inference import InferenceEstimate, Pool, estimate_inference, transfer_of
from validator.derive.estimate.inference import pools as serving_pools
from validator.derive.estimate.interval import Trust, serving_trust, training_trust
from validator.derive.estimate.kv import KvCapacity, Shape
from validator.derive.estimate.network import KvTransfer
from validator.derive.estimate.training_memory import TrainingMemory
from validator.derive.estimate.training_report import TrainingReport, training_report
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom

__all__ = [
    "ESTIMATE_VERSION",
    "Estimate",
    "Goodput",
    "InferenceEstimate",
    "KvCapacity",
    "KvTransfer",
    "Pool",
    "Shape",
    "TrainingMemory",
    "TrainingReport",
    "estimate",

    "gbps_per_gpu",
    "serving_pools",
    "transfer_of",
]

ESTIMATE_VERSION = 2
BomSource = Callable[[], "Bom"]


def _round(x: Any, digits: int = 4) -> Any:
    """Four significant digits: estimates are not more precise, and goldens stay stable."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}")
    if isinstance(x, dict):
        return {k: _round(v, digits) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v, digits) for v in x]
    return x


def estimate_training_design(topology: Topology, bom: BomSource | None = None) -> TrainingReport:
    """The training estimate (validator/derive/estimate/training_report.py), cost from gpu_hour_usd()."""
    return training_report(topology, gpu_hour_usd(topology, bom))


def estimate_inference_design(topology: Topology, bom: BomSource | None = None,
                              pools: list[Pool] | None = None) -> InferenceEstimate:
    """The serving estimate (validator/derive/estimate/inference.py), cost from gpu_hour_usd()."""
    return estimate_inference(topology, gpu_hour_usd(topology, bom), pools)


def gpu_hour_usd(topology: Topology, bom: BomSource | None = None) -> float | None:
    """Cost of a busy GPU-hour: the design's total cost of ownership (validator.derive.cost: depreciation
    of the whole BOM's capex, support and energy) over its busy GPU-hours. None when a BOM line is
    unpriced or a part's power unknown. `bom` gives the design's BOM (Derived passes its own)."""
    from validator.derive import cost
    from validator.derive.bom import build_bom

    return cost.gpu_hour_usd(topology, bom() if bom is not None else build_bom(topology))


@fact
class Estimate:
    """The estimate of one design: rules read the typed report (`training` or `inference`), outputs its
    `as_dict()` (schemas/estimate.schema.json)."""

    name: str
    file: str
    training: TrainingReport | None = None
    inference: InferenceEstimate | None = None
    trust: Trust | None = None
    version: int = ESTIMATE_VERSION

    @property
    def kind(self) -> str:
        return "training" if self.training is not None else "inference"

    def as_dict(self) -> dict[str, Any]:
        body = self.training.as_dict() if self.training is not None else \
            self.inference.as_dict() if self.inference is not None else {}
        if self.trust is not None:
            body = {**body, "trust": self.trust.as_dict()}
        rounded: dict[str, Any] = _round(body)
        return {"version": self.version, "name": self.name, "file": self.file, **rounded, "kind": self.kind}


def estimate(topology: Topology, bom: BomSource | None = None, pools: list[Pool] | None = None) -> Estimate:
    """`bom` gives the design's BOM for the cost per GPU-hour (Derived passes its own; else it is built),
    `pools` the serving pools of an inference design (Derived passes its own; else they are computed)."""
    r = topology.resolved
    if r.design.training:
        report = estimate_training_design(topology, bom)
        return Estimate(r.design.metadata.name, r.file, training=report, trust=_training_trust(report))
    inference = estimate_inference_design(topology, bom, pools)
    return Estimate(r.design.metadata.name, r.file, inference=inference, trust=_serving_trust(topology, inference))


def _training_trust(report: TrainingReport) -> Trust:
    s, e = report.setup, report.estimate
    figures: dict[str, float | str] = {
        "gpus": s.gpus, "sequence_length": s.seq, "params_b": s.model.params_b,
        "constants": e.constants.key, "zero_stage": f"zero-{s.sharding.stage}"}
    return training_trust(e.step_time_s, e.mfu, e.tokens_per_s, e.constants.calibrated, s.model.moe is not None,
                          figures)


def _serving_trust(topology: Topology, inf: InferenceEstimate) -> Trust:
    r = topology.resolved
    w = r.inference
    figures: dict[str, float | str] = {
        "gpu": r.gpu.id, "params_b": r.model.params_b, "mode": inf.mode, "engine": inf.engine,
        "prompt_tokens": w.prompt_tokens, "output_tokens": w.output_tokens}
    values: dict[str, float | None] = {
        k: getattr(inf, k) for k in ("output_tokens_per_s_per_gpu", "total_tokens_per_s_per_gpu",
                                      "requests_per_s_per_replica", "fleet_capacity_qps", "ttft_ms",
                                      "ttft_p50_ms", "tpot_ms", "tpot_p50_ms")}
    trust = serving_trust(values, r.model.moe is not None, figures)
    c = serving_constants(r.gpu.id)
    if c.calibrated:
        return trust
    why = (f"serving constants UNCALIBRATED for {r.gpu.id}: no set for its architecture, the {c.family} "
           "set is borrowed (validator/data/efficiency.yaml serving.default_family)")
    return dataclasses.replace(trust, outside_fit=(*trust.outside_fit, why))
