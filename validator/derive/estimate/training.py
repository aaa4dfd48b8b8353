"""Training step time, MFU and time-to-train (shared/docs/estimator-notes.md sections 2.2-2.5).

One micro-batch on one pipeline stage costs its layers' matmuls at a size-dependent efficiency plus
the exposed TP all-reduces on NVLink (and CP / EP traffic); the step is (m + (p-1)/v) such stage
slots (interleaved 1F1B), plus exposed PP point-to-point and the exposed share of the DP gradient
reduction over the compute fabric.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from validator.derive.estimate.constants import Constants, constants_for
from validator.derive.estimate.flops import attn_width, forward_flops_per_token, layer_matmul_params
from validator.derive.estimate.memory import params_per_gpu, precision_bytes
from validator.resolve.catalog.entries import Gpu, LlmModel


@dataclass(frozen=True)
class TrainingSetup:
    """Everything the estimator reads, from a design's topology or from a published run."""

    model: LlmModel
    gpu: Gpu
    gpus: int
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    vpp: int
    seq: int
    global_batch: int
    micro_batch: int
    precision: str
    recompute: str
    sequence_parallel: bool
    flash_attention: bool
    zero_stage: int
    nvlink_domain: int
    fabric_gbps_per_gpu: float          # scale-out bandwidth per GPU, after oversubscription
    tokens: float | None = None


@dataclass
class TrainingEstimate:
    step_time_s: float
    breakdown: dict[str, float]
    tokens_per_s: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    hfu: float
    comm_share: float
    time_to_train_days: float | None
    scaling_efficiency: float
    microbatches: int
    bubble_fraction: float
    assumptions: dict[str, Any] = field(default_factory=dict)


def _ring(n: int, size: float, bw: float, alpha: float, kind: str = "allreduce") -> float:
    """Ring collective time: bandwidth term (n-1)/n (x2 for all-reduce) plus per-hop latency."""
    if n <= 1 or size <= 0:
        return 0.0
    factor = 2 * (n - 1) / n if kind == "allreduce" else (n - 1) / n
    hops = 2 * (n - 1) if kind == "allreduce" else n - 1
    return factor * size / bw + hops * alpha


def estimate_training(s: TrainingSetup, c: Constants | None = None) -> TrainingEstimate:
    c = c or constants_for(s.gpu.id, s.precision)
    model = s.model
    peak = s.gpu.tflops[s.precision] * 1e12  # type: ignore[index]
    act_bytes = precision_bytes("bf16") if s.precision in ("fp8", "fp4") else precision_bytes(s.precision)
    tokens_mb = s.micro_batch * s.seq / s.cp          # tokens of one micro-batch on one GPU's CP shard
    m = max(1, s.global_batch // (s.dp * s.micro_batch))
    layers_stage = model.layers / s.pp
    causal = s.flash_attention

    # ---- compute per layer per micro-batch per GPU (forward), then fwd + bwd (+ recompute).
    # Linear layers run at the design's precision; the attention core and the LM head run in 16 bit
    # (Transformer Engine keeps them out of FP8).
    peak16 = s.gpu.tflops.get("bf16", s.gpu.tflops.get("fp16", peak / 1e12)) * 1e12
    mat = 2 * layer_matmul_params(model) * tokens_mb / s.tp
    attn = 4 * tokens_mb * s.seq * attn_width(model) / s.tp * (0.5 if causal else 1.0)
    eff = c.gemm_max * (mat / 1e9) / (mat / 1e9 + c.gemm_half_gflop)
    attn_time = attn / (min(peak, peak16) * eff)
    # memory-bound element-wise work (norms, activations, dropout, softmax): the activation bytes
    # of Korthikanti et al. read and written at HBM speed
    h, a = model.hidden, model.heads
    softmax = 0.0 if s.flash_attention else 5 * a * s.seq / h
    if s.sequence_parallel:
        elem_bytes = tokens_mb * h * (34 + softmax) / s.tp
        elem_softmax = tokens_mb * h * softmax / s.tp
    else:
        elem_bytes = tokens_mb * h * (10 + 24 / s.tp + softmax / s.tp)
        elem_softmax = tokens_mb * h * softmax / s.tp
    hbm = s.gpu.memory_bandwidth_tbs * 1e12
    elem = c.elementwise_factor * elem_bytes / hbm
    fwd = mat / (peak * eff) + attn_time + elem
    recompute = {"full": fwd,
                 "selective": c.elementwise_factor * elem_softmax / hbm + (0.0 if causal else attn_time)
                 }.get(s.recompute, 0.0)
    layer_compute = 3 * fwd
    head = 3 * 2 * model.vocab * model.hidden * tokens_mb / s.tp / (min(peak, peak16) * eff)

    # ---- tensor parallel: 2 all-reduces forward, 2 backward (+2 with full recompute), on NVLink
    nvlink = s.gpu.scaleup_bandwidth_gbs / 2 * 1e9 * c.nvlink_efficiency   # one direction
    tp_size = tokens_mb * model.hidden * act_bytes
    n_ar = 4 + (2 if s.recompute == "full" else 0)
    tp_on_nvlink = s.tp <= s.nvlink_domain
    # No compute fabric (NET009 and TRN006 report it): traffic that must leave the NVLink domain crawls
    # at 1 byte/s, so the estimate says ~0 throughput (finite: no division by zero, no NaN downstream).
    fabric = s.fabric_gbps_per_gpu / 8 * 1e9 * c.fabric_efficiency or 1.0
    tp_bw = nvlink if tp_on_nvlink else fabric
    tp_alpha = c.nvlink_latency_s if tp_on_nvlink else c.fabric_latency_s
    layer_tp = n_ar * _ring(s.tp, tp_size, tp_bw, tp_alpha) * c.tp_exposed

    # ---- context parallel: K,V blocks passed around the ring, hidden behind attention when it can be
    kv_block = 2 * tokens_mb * model.kv_heads * model.dim_per_head * act_bytes / s.tp
    cp_bw = nvlink if s.tp * s.cp <= s.nvlink_domain else fabric
    layer_cp = max(0.0, 3 * (s.cp - 1) * kv_block / cp_bw - 3 * attn_time) if s.cp > 1 else 0.0

    # ---- expert parallel: dispatch + combine all-to-all per MoE layer, forward and backward
    layer_ep = 0.0
    if model.moe and s.ep > 1:
        moe_share = 1 - model.moe.dense_layers / model.layers
        a2a = 2 * tokens_mb * model.moe.top_k * model.hidden * act_bytes * (s.ep - 1) / s.ep
        ep_bw = nvlink if s.tp * s.ep <= s.nvlink_domain else fabric
        layer_ep = 3 * a2a / ep_bw * moe_share

    # the last pipeline stage also runs the LM head: it is the slowest stage and sets the pace
    slot = layers_stage * (layer_compute + recompute + layer_tp + layer_cp + layer_ep) + head
    bubble_slots = (s.pp - 1) / s.vpp
    ideal = m * slot
    bubble = bubble_slots * slot

    # ---- pipeline point-to-point: each TP rank sends the stage's activation to the next stage
    # (`pp_exposed` calibrates how much of it stays on the critical path)
    pp_time = 0.0
    if s.pp > 1:
        pp_size = tokens_mb * model.hidden * act_bytes
        t_p2p = pp_size / fabric + c.fabric_latency_s
        pp_time = 2 * m * s.vpp * t_p2p * c.pp_exposed

    # ---- data parallel: gradient reduce-scatter + all-gather (or all-reduce) over the compute fabric
    dp_time = 0.0
    if s.dp > 1:
        grads = 2 * params_per_gpu(model, s.tp, s.pp, s.ep) * (1.5 if s.zero_stage >= 3 else 1.0)
        dp_bw = nvlink if s.tp * s.pp * s.dp <= s.nvlink_domain else fabric
        dp_full = _ring(s.dp * s.cp, grads, dp_bw, c.fabric_latency_s)
        dp_time = dp_full * (1 - c.dp_overlap)

    step = ideal + bubble + pp_time + dp_time
    tokens = s.global_batch * s.seq
    model_flops = 3 * forward_flops_per_token(model, s.seq) * tokens
    # hardware FLOPs = model FLOPs + what recomputation executes again (same attention convention,
    # so HFU >= MFU always); a fused attention kernel's own recomputation is not counted
    hw_per_token = 3 * forward_flops_per_token(model, s.seq)
    if s.recompute == "full":
        hw_per_token += forward_flops_per_token(model, s.seq, logits=False)
    elif s.recompute == "selective" and not causal:
        hw_per_token += model.layers * 4 * s.seq * attn_width(model)
    hw_flops = hw_per_token * tokens
    n = s.tp * s.pp * s.dp * s.cp
    compute_only = m * layers_stage * layer_compute + m * head
    breakdown = {
        "compute": compute_only,
        "recompute": m * layers_stage * recompute,
        "tp": m * layers_stage * layer_tp,
        "cp": m * layers_stage * layer_cp,
        "ep": m * layers_stage * layer_ep,
        "pp": pp_time,
        "dp": dp_time,
        "bubble": bubble,
    }
    comm = breakdown["tp"] + breakdown["cp"] + breakdown["ep"] + pp_time + dp_time
    mtf = model_flops / step / n / 1e12
    return TrainingEstimate(
        step_time_s=step, breakdown=breakdown, tokens_per_s=tokens / step, model_tflops_per_gpu=mtf,
        hardware_tflops_per_gpu=hw_flops / step / n / 1e12, mfu=mtf * 1e12 / peak,
        hfu=hw_flops / step / n / peak, comm_share=comm / step,
        time_to_train_days=(s.tokens / (tokens / step) / 86400) if s.tokens else None,
        scaling_efficiency=(compute_only + breakdown["recompute"]) / step, microbatches=m,
        bubble_fraction=bubble / step,
        assumptions={"gemm_efficiency": round(eff, 4), "gemm_efficiency_max": c.gemm_max,
                     "nvlink_efficiency": c.nvlink_efficiency, "fabric_efficiency": c.fabric_efficiency,
                     "dp_overlap": c.dp_overlap, "tp_exposed": c.tp_exposed, "pp_exposed": c.pp_exposed,
                     "elementwise_factor": c.elementwise_factor,
                     "peak_tflops": peak / 1e12, "precision": s.precision,
                     "flop_convention": "matmul FLOPs, 3 x forward, full s^2 attention in model FLOPs",
                     "attention_executed": "causal half" if causal else "full s^2",
                     "schedule": "interleaved 1F1B" if s.vpp > 1 else "1F1B",
                     "fabric_gbps_per_gpu": s.fabric_gbps_per_gpu, "constants_source": c.source},
    )


