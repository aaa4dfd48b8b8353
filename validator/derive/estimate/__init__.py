"""Stage 7: performance and memory estimates of a design (`clusterplan estimate`, the latency and memory
rules, the BOM summary). Shape of the JSON: schemas/estimate.schema.json."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from validator.base.resources import load_data
from validator.derive.estimate.inference import InferenceSetup, estimate_latency, kv_transfer_ms, replicas_needed
from validator.derive.estimate.memory import block_size, kv_capacity, training_memory
from validator.derive.estimate.training import TrainingSetup, estimate_training
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom

ESTIMATE_VERSION = 1
BomSource = Callable[[], "Bom"]


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


def _utilization(topology: Topology) -> float:
    r = topology.resolved
    return r.inference.gpu_memory_utilization or r.defaults["gpu_memory_utilization"]


def estimate_inference_design(topology: Topology, bom: BomSource | None = None) -> dict[str, Any]:
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
        "cost_per_million_tokens": cost_per_million_tokens(topology, batch / (at_batch.tpot_ms / 1e3) / replica.gpus,
                                                           bom),
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


def gpu_hour_usd(topology: Topology, bom: BomSource | None = None) -> float | None:
    """Cost of a busy GPU-hour: the design's total cost of ownership (validator.derive.cost: depreciation
    of the whole BOM's capex, support and energy) over its busy GPU-hours. None when a BOM line is
    unpriced or a part's power unknown. `bom` gives the design's BOM (Derived passes its own)."""
    from validator.derive import cost
    from validator.derive.bom import build_bom

    return cost.gpu_hour_usd(topology, bom() if bom is not None else build_bom(topology))


def cost_per_million_tokens(topology: Topology, tokens_per_s_per_gpu: float,
                            bom: BomSource | None = None) -> float | None:
    rate = gpu_hour_usd(topology, bom)
    if rate is None or tokens_per_s_per_gpu <= 0:
        return None
    return rate / (tokens_per_s_per_gpu * 3600 / 1e6)


def estimate(topology: Topology, bom: BomSource | None = None) -> dict[str, Any]:
    r = topology.resolved
    body = estimate_training_design(topology) if r.design.training else estimate_inference_design(topology, bom)
    return {"version": ESTIMATE_VERSION, "name": r.design.metadata.name, "file": r.file, **body}
