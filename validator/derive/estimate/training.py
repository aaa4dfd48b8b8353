"""Training step time, MFU and throughput (docs/estimator.md, Training).

A pipeline stage runs one micro-batch in a *slot*: its layers' compute (compute.py) plus the exposed
TP, CP and EP traffic (comm.py); the slowest stage (the most layers, plus the LM head on the last)
sets the pace. A step is m slots plus the (p-1)/v-slot interleaved-1F1B bubble, the exposed
pipeline sends, the exposed data-parallel traffic (data_parallel.py), the optimizer step, exposed
activation offload, and the wait for the slowest of the nodes (stragglers: the expected maximum
of per-node jitter grows with sqrt(2 ln nodes)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from validator.base.facts import fact
from validator.derive.estimate.comm import cp_time, ep_time, pp_time, tp_time
from validator.derive.estimate.compute import head_compute, layer_compute, optimizer_time
from validator.derive.estimate.constants import TrainingConstants, training_constants
from validator.derive.estimate.data_parallel import DpTraffic, dp_cost, param_split
from validator.derive.estimate.flops import (
    forward_flops_per_token,
    mtp_flops_per_token,
    recompute_flops_per_token,
    weight_flops_per_token,
)
from validator.derive.estimate.hardware import peak_flops
from validator.derive.estimate.offload import offload_exposed
from validator.derive.estimate.setup import TrainingSetup, default_stage_layers

MFU_CONVENTION = ("model FLOPs = matmuls, training = 3 x forward, attention scores counted as a causal kernel "
                  "executes them (half of s^2); dense peak at the design's precision")


@dataclass
class TrainingEstimate:
    step_time_s: float
    breakdown: dict[str, float]
    tokens_per_s: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float                      # causal convention (MFU_CONVENTION)
    mfu_full_attention: float       # the same step in the full-s^2 convention, for older published tables
    hfu: float
    comm_share: float
    scaling_efficiency: float
    microbatches: int
    bubble_fraction: float
    stage_layers: tuple[int, ...]
    ep_alltoall_ratio: float        # expert all-to-all time per layer / the layer's compute (0 without EP)
    dp_traffic: DpTraffic
    constants: TrainingConstants
    assumptions: dict[str, Any] = field(default_factory=dict)


@fact
class _Slot:
    time: float            # slowest stage, one micro-batch
    forward: float         # its forward compute (overlap window)
    backward: float
    compute: float         # per micro-batch: layers' compute + head
    recompute: float
    tp: float
    cp: float
    ep: float
    layers: int
    ep_ratio: float


def _slot(s: TrainingSetup, c: TrainingConstants) -> _Slot:
    lc = layer_compute(s, c)
    tp, cp, ep = tp_time(s, c), cp_time(s, c, lc.attention), ep_time(s, c)
    tp_exp, ep_exp = tp * (c.tp_overlap_exposed if s.tp_comm_overlap else c.tp_exposed), ep * c.ep_exposed
    per_layer = lc.train + lc.recompute + tp_exp + cp + ep_exp + c.comm_contention * ((tp - tp_exp) + (ep - ep_exp))
    head = head_compute(s, c)
    stages = _stage_work(s, per_layer, head)
    last = len(stages) - 1
    heads = [head * (1 + s.mtp_layers) if i == last else 0.0 for i in range(last + 1)]
    times = [n * per_layer + heads[i] for i, n in enumerate(stages)]
    k = max(range(len(stages)), key=lambda i: (times[i], i))
    n = stages[k]
    head_k = heads[k]
    return _Slot(time=times[k], forward=n * lc.forward + head_k / 3, backward=n * 2 * lc.forward + 2 * head_k / 3,
                 compute=n * lc.train + head_k, recompute=n * lc.recompute,
                 tp=n * (tp_exp + c.comm_contention * (tp - tp_exp)), cp=n * cp,
                 ep=n * (ep_exp + c.comm_contention * (ep - ep_exp)), layers=max(1, n),
                 ep_ratio=ep / (lc.train + lc.recompute) if ep > 0 else 0.0)


def _stage_work(s: TrainingSetup, per_layer: float, head: float) -> list[int]:
    """Layers each pipeline stage runs per micro-batch, multi-token prediction modules included: each is one
    more transformer layer and one more pass through the LM head and the loss (DeepSeek-V3 report, 2.2), on
    the last stage (its 2h x h projection, 6 % of a DeepSeek-V3 module's FLOPs, is not timed). Without a
    declared layout the last stage gets the decoder layers that balance the pipeline around the modules, as
    Megatron's DeepSeek-V3 layouts give the module and the loss a stage share of their own
    ("Et*3|(tt|)*29,m|L"); a declared layout counts decoder layers, and the modules come on top of its
    last stage."""
    k, p = s.mtp_layers, s.pp
    if k and not s.pipeline_layers and p > 1:
        def slowest(last: int) -> float:
            rest = max(default_stage_layers(s.model.layers - last, p - 1))
            return max(rest * per_layer, (last + k) * per_layer + (1 + k) * head)
        last = min(range(s.model.layers + 1), key=lambda n: (slowest(n), -n))
        return [*default_stage_layers(s.model.layers - last, p - 1), last + k]
    return [n + (k if i == p - 1 else 0) for i, n in enumerate(s.stage_layers)]


def estimate_training(s: TrainingSetup, c: TrainingConstants | None = None) -> TrainingEstimate:
    c = c or training_constants(s.gpu.id, s.precision)
    slot = _slot(s, c)
    m = s.microbatches
    bubble = (s.pp - 1) / s.vpp * slot.time
    pp = pp_time(s, c) * c.pp_exposed
    dp = dp_cost(s, c, slot.forward, slot.backward, slot.layers)
    dense, experts = param_split(s)
    shards = s.dp * s.cp if s.sharding.stage >= 1 else 1
    # experts shard over the DP x CP / EP expert-data-parallel ranks
    optimizer = optimizer_time((dense + experts * (s.ep if shards > 1 else 1)) * s.trainable_share, shards, s, c)
    offload = offload_exposed(s, slot.forward, slot.backward) * m
    busy = m * slot.time + bubble
    nodes = max(1, math.ceil(s.gpus / 8))
    straggler = c.straggler_cv * math.sqrt(2 * math.log(nodes)) * busy
    breakdown = {
        "compute": m * slot.compute, "recompute": m * slot.recompute, "tp": m * slot.tp, "cp": m * slot.cp,
        "ep": m * slot.ep, "pp": pp, "dp": dp.exposed, "bubble": bubble, "optimizer": optimizer,
        "offload": offload, "straggler": straggler,
    }
    step = sum(breakdown.values())
    return _result(s, c, step, breakdown, dp.traffic, slot.ep_ratio)


def _result(s: TrainingSetup, c: TrainingConstants, step: float, breakdown: dict[str, float],
            traffic: DpTraffic, ep_ratio: float) -> TrainingEstimate:
    model, n = s.model, s.gpus
    tokens = s.global_batch * s.seq
    peak = peak_flops(s.gpu, s.precision)
    frozen = (1 - s.trainable_share) * weight_flops_per_token(model)    # weight gradients not computed
    mtp = 3 * mtp_flops_per_token(model, s.seq, s.mtp_layers)
    model_flops = (3 * forward_flops_per_token(model, s.seq) + mtp - frozen) * tokens
    full_flops = (3 * (forward_flops_per_token(model, s.seq, convention="full")
                       + mtp_flops_per_token(model, s.seq, s.mtp_layers, "full")) - frozen) * tokens
    run = "causal" if s.flash_attention else "full"
    executed = 3 * (forward_flops_per_token(model, s.seq, convention=run)
                    + mtp_flops_per_token(model, s.seq, s.mtp_layers, run)) - frozen
    executed += recompute_flops_per_token(model, s.seq, s.recompute, s.recompute_share, s.flash_attention)
    comm = sum(breakdown[k] for k in ("tp", "cp", "ep", "pp", "dp", "offload"))
    return TrainingEstimate(
        step_time_s=step, breakdown=breakdown, tokens_per_s=tokens / step,
        model_tflops_per_gpu=model_flops / step / n / 1e12, hardware_tflops_per_gpu=executed * tokens / step / n / 1e12,
        mfu=model_flops / step / n / peak, mfu_full_attention=full_flops / step / n / peak,
        hfu=executed * tokens / step / n / peak, comm_share=comm / step,
        scaling_efficiency=(breakdown["compute"] + breakdown["recompute"]) / step, microbatches=s.microbatches,
        bubble_fraction=breakdown["bubble"] / step, stage_layers=s.stage_layers, ep_alltoall_ratio=ep_ratio,
        dp_traffic=traffic, constants=c,
        assumptions=_assumptions(s, c))


def _assumptions(s: TrainingSetup, c: TrainingConstants) -> dict[str, Any]:
    return {
        "constants": c.key, "calibrated": c.calibrated, "uncertainty_pct": round(100 * c.uncertainty, 1),
        "gemm_efficiency_max": c.gemm_max, "gemm_half_gflop": c.gemm_half_gflop,
        "attention_efficiency": c.attention_efficiency, "elementwise_factor": c.elementwise_factor,
        "tp_exposed": c.tp_overlap_exposed if s.tp_comm_overlap else c.tp_exposed, "pp_exposed": c.pp_exposed,
        "ep_exposed": c.ep_exposed,
        "comm_contention": c.comm_contention, "layer_overhead_us": c.layer_overhead_us,
        "tier_efficiency": c.tier_efficiency, "straggler_cv": c.straggler_cv,
        "nvlink_efficiency": c.nvlink_efficiency, "fabric_efficiency": c.fabric_efficiency,
        "peak_tflops": peak_flops(s.gpu, s.precision) / 1e12, "precision": s.precision,
        "mfu_convention": MFU_CONVENTION,
        "attention_executed": "causal half (fused kernel)" if s.flash_attention else "full s^2 (unfused)",
        "schedule": "interleaved 1F1B" if s.vpp > 1 else "1F1B", "sharding": _sharding_name(s),
        "fabric_gbps_per_gpu": s.fabric.gbps_per_gpu,
    }


def _sharding_name(s: TrainingSetup) -> str:
    stage, group = s.sharding.stage, s.sharding.group
    if stage == 3 and group and group < s.dp * s.cp:
        return f"HSDP (ZeRO-3 in groups of {group})"
    return {0: "DDP", 1: "distributed optimizer (ZeRO-1)", 2: "ZeRO-2", 3: "FSDP (ZeRO-3)"}[stage]
