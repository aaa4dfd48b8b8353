"""Inference latency, throughput, KV-limited concurrency and cost (shared/docs/estimator-notes.md 2.7-2.8).

Prefill is compute bound (decides TTFT); decode reads the weights and the batch's KV cache from HBM
every step (decides TPOT), plus a latency-bound TP all-reduce per layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from validator.derive.estimate.constants import Constants, constants_for
from validator.derive.estimate.flops import attn_width, layer_matmul_params
from validator.derive.estimate.memory import (
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    params_per_gpu,
    precision_bytes,
)
from validator.resolve.catalog.entries import Gpu, LlmModel


@dataclass(frozen=True)
class InferenceSetup:
    model: LlmModel
    gpu: Gpu
    tp: int
    pp: int
    ep: int
    gpus: int                       # per replica
    weight_precision: str
    kv_precision: str
    prompt_tokens: int
    output_tokens: int
    batch: int
    nvlink_domain: int


@dataclass
class InferenceLatency:
    ttft_ms: float
    tpot_ms: float
    prefill_batch_ms: float
    output_tokens_per_s_per_gpu: float
    output_tokens_per_s_per_replica: float
    requests_per_s_per_replica: float
    assumptions: dict[str, Any] = field(default_factory=dict)


def _peak(gpu: Gpu, precision: str) -> float:
    key = precision if precision in gpu.tflops else ("bf16" if "bf16" in gpu.tflops else "fp16")
    return gpu.tflops[key] * 1e12


def prefill_flops(model: LlmModel, tokens: int) -> float:
    """Forward FLOPs of one prompt: matmuls plus causal attention (half of s^2), plus the LM head."""
    matmul = 2 * layer_matmul_params(model) * tokens * model.layers
    attention = 2 * model.layers * tokens * tokens * attn_width(model)
    return matmul + attention + 2 * model.vocab * model.hidden


def estimate_latency(s: InferenceSetup, c: Constants | None = None) -> InferenceLatency:
    c = c or constants_for(s.gpu.id, s.weight_precision)
    model = s.model
    peak = _peak(s.gpu, s.weight_precision)
    shards = s.tp * s.pp
    nvlink = s.gpu.scaleup_bandwidth_gbs / 2 * 1e9 * c.nvlink_efficiency
    act = precision_bytes("bf16")

    def allreduce(size: float) -> float:
        if s.tp <= 1:
            return 0.0
        return 2 * (s.tp - 1) / s.tp * size / nvlink + 2 * (s.tp - 1) * c.nvlink_latency_s

    weights_gpu = params_per_gpu(model, s.tp, s.pp, s.ep) * precision_bytes(s.weight_precision)
    hbm = s.gpu.memory_bandwidth_tbs * 1e12 * c.decode_memory_efficiency
    launch = model.layers * c.layer_overhead_s   # per forward pass: kernel launches and syncs

    # prefill: compute bound (but never faster than one read of the weights), 2 all-reduces per layer
    def prefill(batch: int) -> float:
        compute = batch * prefill_flops(model, s.prompt_tokens) / (shards * peak * c.prefill_efficiency)
        comm = 2 * model.layers * allreduce(batch * s.prompt_tokens * model.hidden * act)
        return max(compute, weights_gpu / hbm) + comm + launch

    ttft = prefill(1)
    # decode at the batch's average context: weights + KV read from HBM, or compute if larger
    ctx = s.prompt_tokens + s.output_tokens * c.decode_context_share
    kv_gpu = kv_bytes_per_token_per_gpu(model, s.kv_precision, s.tp, s.pp) * ctx * s.batch
    memory_time = (weights_gpu + kv_gpu) / hbm
    active = params_per_gpu(model, s.tp, s.pp, s.ep) * (model.active_params_b / model.params_b if model.moe else 1)
    compute_time = 2 * active * s.batch / (peak * c.prefill_efficiency)
    step = max(memory_time, compute_time) * s.pp + 2 * model.layers * allreduce(s.batch * model.hidden * act) + \
        launch
    prefill_batch = prefill(s.batch)
    total = prefill_batch + s.output_tokens * step
    out_per_replica = s.batch * s.output_tokens / total
    return InferenceLatency(
        ttft_ms=ttft * 1e3, tpot_ms=step * 1e3, prefill_batch_ms=prefill_batch * 1e3,
        output_tokens_per_s_per_gpu=out_per_replica / s.gpus, output_tokens_per_s_per_replica=out_per_replica,
        requests_per_s_per_replica=s.batch / total,
        assumptions={"prefill_efficiency": c.prefill_efficiency, "decode_memory_efficiency": c.decode_memory_efficiency,
                     "layer_overhead_us": c.layer_overhead_s * 1e6, "batching": "static (whole batch "
                     "prefilled, then decoded)", "decode_context_share": c.decode_context_share,
                     "peak_tflops": peak / 1e12, "constants_source": c.source},
    )


def kv_transfer_ms(model: LlmModel, kv_precision: str, prompt_tokens: int, gbps: float, efficiency: float) -> float:
    """Prefill-to-decode KV transfer of one prompt over `gbps` of aggregate NIC bandwidth."""
    return prompt_tokens * kv_bytes_per_token(model, kv_precision) / (gbps / 8 * 1e9 * efficiency) * 1e3


def replicas_needed(qps: float | None, concurrency: int | None, qps_per_replica: float,
                    max_concurrency: int) -> int | None:
    need = []
    if qps:
        need.append(math.ceil(qps / qps_per_replica) if qps_per_replica > 0 else 0)
    if concurrency:
        need.append(math.ceil(concurrency / max_concurrency) if max_concurrency > 0 else 0)
    return max(need) if need else None
