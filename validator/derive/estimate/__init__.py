"""Performance and memory estimates of a design (`clusterplan estimate`, the latency and memory
rules, the BOM summary). Shape of the JSON: schemas/estimate.schema.json."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from validator.base.facts import fact
from validator.derive.estimate.goodput import Goodput
from validator.derive.estimate.inference import InferenceEstimate, Pool, estimate_inference, transfer_of
from validator.derive.estimate.inference import pools as serving_pools
from validator.derive.estimate.kv import KvCapacity, Shape
from validator.derive.estimate.network import KvTransfer
from validator.derive.estimate.training_memory import TrainingMemory
from validator.derive.estimate.training_report import TrainingReport, training_report
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom

__all__ = ["ESTIMATE_VERSION", "Estimate", "Goodput", "InferenceEstimate", "KvCapacity", "KvTransfer", "Pool", "Shape",
           "TrainingMemory", "TrainingReport", "estimate", "fabric_gbps_per_gpu", "serving_pools", "transfer_of"]

ESTIMATE_VERSION = 2
BomSource = Callable[[], "Bom"]


def fabric_gbps_per_gpu(topology: Topology, fabric: str = "compute") -> float:
    """Scale-out bandwidth per GPU (links at the fabric's speed), divided by the worst oversubscription of
    the fabric's tiers."""
    r = topology.resolved
    fab = r.fabrics.get(fabric)
    if fab is None or not fab.links_per_server:
        return 0.0
    per_gpu = fab.links_per_server * fab.spec.speed_gbps / r.server.gpus
    ratio = 1.0
    for tier in topology.fabrics[fabric].tiers if fabric in topology.fabrics else []:
        ratio = max(ratio, tier.ratio)
    return per_gpu / ratio


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
    version: int = ESTIMATE_VERSION

    @property
    def kind(self) -> str:
        return "training" if self.training is not None else "inference"

    def as_dict(self) -> dict[str, Any]:
        body = self.training.as_dict() if self.training is not None else \
            self.inference.as_dict() if self.inference is not None else {}
        rounded: dict[str, Any] = _round(body)
        return {"version": self.version, "name": self.name, "file": self.file, **rounded, "kind": self.kind}


def estimate(topology: Topology, bom: BomSource | None = None, pools: list[Pool] | None = None) -> Estimate:
    """`bom` gives the design's BOM for the cost per GPU-hour (Derived passes its own; else it is built),
    `pools` the serving pools of an inference design (Derived passes its own; else they are computed)."""
    r = topology.resolved
    if r.design.training:
        return Estimate(r.design.metadata.name, r.file, training=estimate_training_design(topology, bom))
    return Estimate(r.design.metadata.name, r.file, inference=estimate_inference_design(topology, bom, pools))
