"""Stage 7: performance and memory estimates of a design (`clusterplan estimate`, the latency and memory
rules, the BOM summary). Shape of the JSON: schemas/estimate.schema.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from validator.base.resources import load_data
from validator.derive.estimate.inference import InferenceEstimate, estimate_inference
from validator.derive.estimate.memory import training_memory
from validator.derive.estimate.training import TrainingSetup, estimate_training
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom

ESTIMATE_VERSION = 2
BomSource = Callable[[], "Bom"]


def fabric_gbps_per_gpu(topology: Topology, fabric: str = "compute") -> float:
    """Scale-out bandwidth per GPU, divided by the worst oversubscription of the fabric's tiers."""
    r = topology.resolved
    fab = r.fabrics.get(fabric)
    if fab is None or not fab.links_per_server:
        return 0.0
    per_gpu = fab.links_per_server * fab.spec.speed_gbps / r.server.gpus
    ratio = 1.0
    for tier in topology.fabrics[fabric].tiers if fabric in topology.fabrics else []:
        ratio = max(ratio, tier.ratio)
    return per_gpu / ratio


def training_setup(topology: Topology) -> TrainingSetup:
    r = topology.resolved
    t = r.training
    p = t.parallelism
    return TrainingSetup(model=r.model, gpu=r.gpu, gpus=topology.gpus, tp=p.tp, pp=p.pp, dp=p.dp, cp=p.cp,
                         ep=p.ep, vpp=p.vpp, seq=t.sequence_length, global_batch=t.global_batch,
                         micro_batch=t.micro_batch, precision=t.precision, recompute=t.recompute,
                         sequence_parallel=p.sequence_parallel, flash_attention=t.flash_attention,
                         zero_stage=t.zero_stage, nvlink_domain=r.nvlink_domain_gpus,
                         fabric_gbps_per_gpu=fabric_gbps_per_gpu(topology), tokens=t.tokens)


def _round(x: Any, digits: int = 4) -> Any:
    """Four significant digits: estimates are not more precise, and goldens stay stable."""
    if isinstance(x, float):
        return float(f"{x:.{digits}g}")
    if isinstance(x, dict):
        return {k: _round(v, digits) for k, v in x.items()}
    return x


def estimate_training_design(topology: Topology) -> dict[str, Any]:
    r = topology.resolved
    setup = training_setup(topology)
    e = estimate_training(setup)
    reserve = float(load_data("thresholds.yaml")["thresholds"]["memory_reserve_gb"]["value"])
    mem = training_memory(r.model, r.training, r.design.thresholds.get("memory_reserve_gb", reserve))
    out = {
        "kind": "training", "step_time_s": e.step_time_s, "mfu": e.mfu, "hfu": e.hfu,
        "model_tflops_per_gpu": e.model_tflops_per_gpu, "hardware_tflops_per_gpu": e.hardware_tflops_per_gpu,
        "tokens_per_s": e.tokens_per_s, "tokens_per_s_per_gpu": e.tokens_per_s / (setup.tp * setup.pp * setup.dp *
                                                                                 setup.cp),
        "time_to_train_days": e.time_to_train_days, "comm_share": e.comm_share,
        "scaling_efficiency": e.scaling_efficiency, "bubble_fraction": e.bubble_fraction,
        "microbatches_per_step": e.microbatches, "breakdown": e.breakdown,
        "memory_per_gpu_gb": {**asdict(mem), "total_gb": mem.total_gb, "hbm_gb": r.gpu.memory_gb},
        "assumptions": e.assumptions,
    }
    rounded: dict[str, Any] = _round(out)
    return rounded


def estimate_inference_design(topology: Topology, bom: BomSource | None = None) -> InferenceEstimate:
    """The serving estimate (validator/derive/estimate/inference.py), cost from gpu_hour_usd()."""
    return estimate_inference(topology, gpu_hour_usd(topology, bom))


def gpu_hour_usd(topology: Topology, bom: BomSource | None = None) -> float | None:
    """Cost of a busy GPU-hour: the design's total cost of ownership (validator.derive.cost: depreciation
    of the whole BOM's capex, support and energy) over its busy GPU-hours. None when a BOM line is
    unpriced or a part's power unknown. `bom` gives the design's BOM (Derived passes its own)."""
    from validator.derive import cost
    from validator.derive.bom import build_bom

    return cost.gpu_hour_usd(topology, bom() if bom is not None else build_bom(topology))


@dataclass
class Estimate:
    """The estimate of one design: `training` (a dict today) or `inference` (typed)."""

    version: int
    name: str
    file: str
    kind: str
    training: dict[str, Any] | None = None
    inference: InferenceEstimate | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `clusterplan estimate --format json` (schemas/estimate.schema.json)."""
        body = self.training if self.training is not None else \
            (_round(self.inference.as_dict()) if self.inference is not None else {})
        return {"version": self.version, "name": self.name, "file": self.file, "kind": self.kind, **body}


def estimate(topology: Topology, bom: BomSource | None = None) -> Estimate:
    """`bom` gives the design's BOM for the cost per GPU-hour (Derived passes its own; else it is built)."""
    r = topology.resolved
    name, file = r.design.metadata.name, r.file
    if r.design.training:
        return Estimate(ESTIMATE_VERSION, name, file, "training", training=estimate_training_design(topology))
    return Estimate(ESTIMATE_VERSION, name, file, "inference", inference=estimate_inference_design(topology, bom))
