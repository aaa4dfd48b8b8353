"""Stage 7: performance and memory estimates of a design (`clusterplan estimate`, the latency and memory
rules, the BOM summary). Shape of the JSON: schemas/estimate.schema.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from validator.base.resources import load_data
from validator.derive.estimate.inference import InferenceSetup, estimate_latency, kv_transfer_ms, replicas_needed
from validator.derive.estimate.memory import block_size, kv_capacity
from validator.derive.estimate.training_report import TrainingReport, training_report
from validator.expand.topology import Topology

ESTIMATE_VERSION = 1


def fabric_gbps_per_gpu(topology: Topology, fabric: str = "compute") -> float:
    """Scale-out bandwidth per GPU, divided by the worst oversubscription of the fabric's tiers."""
    r = topology.resolved
    fab = r.fabrics.get(fabric)
    if fab is None or not fab.links_per_server:
        return 0.0
    per_gpu = fab.links_per_server * fab.nic_speed_gbps / r.server.gpus
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


def estimate_training_design(topology: Topology) -> TrainingReport:
    return training_report(topology, gpu_hour_usd(topology))


def _utilization(topology: Topology) -> float:
    r = topology.resolved
    return r.inference.gpu_memory_utilization or r.defaults["gpu_memory_utilization"]


def estimate_inference_design(topology: Topology) -> dict[str, Any]:
    r = topology.resolved
    inf = r.inference
    thresholds = load_data("thresholds.yaml")["thresholds"]
    reserve = r.design.thresholds.get("inference_reserve_gb", float(thresholds["inference_reserve_gb"]["value"]))
    serving = load_data("serving.yaml")
    max_seqs = int(serving["max_num_seqs"]["value"])
    d = inf.disaggregation
    decode_pool = d.decode if d else None
    replica = decode_pool.replica if decode_pool else inf.replica
    cap = kv_capacity(r.model, inf, r.gpu.memory_gb, _utilization(topology), reserve, replica.tp, replica.pp,
                      replica.gpus)
    batch = max(1, min(cap.max_concurrency, max_seqs))

    def setup(rep: Any, b: int) -> InferenceSetup:
        return InferenceSetup(r.model, r.gpu, rep.tp, rep.pp, rep.ep, rep.gpus, inf.weight_precision, inf.kv_precision,
                              inf.prompt_tokens, inf.output_tokens, b, r.nvlink_domain_gpus)

    at_batch = estimate_latency(setup(replica, batch))
    single = estimate_latency(setup(d.prefill.replica if d else replica, 1))
    ttft = single.ttft_ms
    transfer = None
    if d is not None:
        fab = r.fabrics.get(d.kv_transfer_fabric)
        servers = max(1, d.decode.replica.gpus // r.server.gpus)
        gbps = (fab.links_per_server * fab.nic_speed_gbps * servers) if fab else 0.0
        eff = float(load_data("efficiency.yaml")["communication"]["fabric_efficiency"]["value"])
        transfer = kv_transfer_ms(r.model, inf.kv_precision, inf.prompt_tokens, gbps, eff) if gbps else None
        ttft += transfer or 0.0
    # continuous batching: a replica finishes `batch` requests every output_tokens x TPOT
    qps_per_replica = batch / (inf.output_tokens * at_batch.tpot_ms / 1e3)
    replicas = replicas_needed(inf.targets.qps, inf.targets.concurrent_requests, qps_per_replica, cap.max_concurrency)
    out = {
        "kind": "inference",
        "weights_gb_per_gpu": cap.weights_gb, "kv_bytes_per_token": cap.kv_bytes_per_token,
        "kv_bytes_per_token_per_gpu": cap.kv_bytes_per_token_per_gpu, "kv_gb_per_gpu": cap.kv_gb,
        "kv_tokens_per_replica": cap.tokens_per_replica, "max_concurrency_per_replica": cap.max_concurrency,
        "batch": batch, "ttft_ms": ttft, "kv_transfer_ms": transfer, "tpot_ms": at_batch.tpot_ms,
        "output_tokens_per_s_per_gpu": batch / (at_batch.tpot_ms / 1e3) / replica.gpus,
        "requests_per_s_per_replica": qps_per_replica, "replicas_needed": replicas,
        "replicas_planned": _planned_replicas(topology),
        "cost_per_million_tokens": cost_per_million_tokens(topology, batch / (at_batch.tpot_ms / 1e3) / replica.gpus),
        "assumptions": {**at_batch.assumptions, "gpu_memory_utilization": _utilization(topology),
                        "reserve_gb_per_gpu": reserve, "max_num_seqs": max_seqs,
                        "ttft": "batch 1, no queueing" + (" + KV transfer" if d else ""),
                        "kv_block_size": block_size()},
    }
    rounded: dict[str, Any] = _round(out)
    return rounded


def _planned_replicas(topology: Topology) -> int:
    inf = topology.resolved.inference
    if inf.disaggregation:
        return inf.disaggregation.decode.replicas
    return inf.replicas or (inf.autoscaling.max if inf.autoscaling else 0)


def gpu_hour_usd(topology: Topology) -> float | None:
    """Capex of a GPU's share of its server amortized per hour, plus its power at the facility PUE."""
    r = topology.resolved
    price = r.design.costs.prices_usd.get(r.server.id, r.server.price_usd)
    if price is None or r.server.max_power_w is None:
        return None
    years = r.design.costs.amortization_years or r.defaults["amortization_years"]
    hours = years * float(load_data("serving.yaml")["hours_per_year"]["value"])
    capex = price / r.server.gpus / hours
    power = r.server.max_power_w / r.server.gpus / 1000 * r.pue * r.electricity_usd_per_kwh
    return capex + power


def cost_per_million_tokens(topology: Topology, tokens_per_s_per_gpu: float) -> float | None:
    rate = gpu_hour_usd(topology)
    if rate is None or tokens_per_s_per_gpu <= 0:
        return None
    return rate / (tokens_per_s_per_gpu * 3600 / 1e6)


@dataclass(frozen=True)
class InferenceReport:
    """The inference half as it computes today (a dict); typed by its own engineer."""

    body: dict[str, Any]
    kind: str = "inference"

    def as_dict(self) -> dict[str, Any]:
        return self.body


@dataclass(frozen=True)
class Estimate:
    """The estimate of one design: rules read the typed report, outputs its `as_dict()`."""

    name: str
    file: str
    training: TrainingReport | None = None
    inference: InferenceReport | None = None
    version: int = ESTIMATE_VERSION

    @property
    def kind(self) -> str:
        return "training" if self.training else "inference"

    def as_dict(self) -> dict[str, Any]:
        body = self.training.as_dict() if self.training else self.inference.as_dict() if self.inference else {}
        rounded: dict[str, Any] = _round(body)
        return {"version": self.version, "name": self.name, "file": self.file, **rounded}


def estimate(topology: Topology) -> Estimate:
    r = topology.resolved
    if r.design.training:
        return Estimate(r.design.metadata.name, r.file, training=estimate_training_design(topology))
    return Estimate(r.design.metadata.name, r.file, inference=InferenceReport(estimate_inference_design(topology)))
