"""Memory per GPU: shared helpers (bytes per precision, parameters per GPU), inference weights and KV
cache (vLLM sizing; shared/docs/estimator-notes.md section 2.7). Training memory: training_memory.py."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from validator.base.resources import load_data
from validator.read.model import Inference
from validator.resolve.catalog.entries import LlmModel

GB = 1e9


@cache
def precision_bytes(precision: str) -> float:
    return float(load_data("precision.yaml")["bytes"]["value"][precision])


def block_size() -> int:
    return int(load_data("precision.yaml")["vllm_block_size"]["value"])


def expert_params(model: LlmModel) -> float:
    """Parameters inside routed experts (sharded by EP); 0 for a dense model."""
    if model.moe is None:
        return 0.0
    moe_layers = model.layers - model.moe.dense_layers
    return float(moe_layers * model.moe.experts * 3 * model.hidden * model.moe.expert_ffn_hidden)


def params_per_gpu(model: LlmModel, tp: int, pp: int, ep: int) -> float:
    total = model.params_b * 1e9
    experts = min(expert_params(model), total)
    return (total - experts) / (tp * pp) + experts / (tp * pp * ep)


def kv_bytes_per_token(model: LlmModel, kv_precision: str) -> float:
    """KV cache bytes for one token over all layers (MLA keeps one latent per layer)."""
    per_layer = (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) if model.mla else \
        2 * model.kv_heads * model.dim_per_head
    return model.layers * per_layer * precision_bytes(kv_precision)


def kv_bytes_per_token_per_gpu(model: LlmModel, kv_precision: str, tp: int, pp: int) -> float:
    """KV heads are split by TP (replicated when fewer than TP); MLA's latent is not split by TP."""
    layers = math.ceil(model.layers / pp)
    if model.mla:
        per_layer = model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    else:
        heads = model.kv_heads // tp if model.kv_heads >= tp else 1
        per_layer = 2 * heads * model.dim_per_head
    return layers * per_layer * precision_bytes(kv_precision)


@dataclass(frozen=True)
class KvCapacity:
    hbm_gb: float
    usable_gb: float          # HBM x utilization
    weights_gb: float         # per GPU
    reserve_gb: float
    kv_gb: float              # left for the KV cache, per GPU
    kv_bytes_per_token: float            # whole model
    kv_bytes_per_token_per_gpu: float
    tokens_per_replica: int
    max_concurrency: int      # requests at max_context_tokens


def kv_capacity(model: LlmModel, inf: Inference, hbm_gb: float, utilization: float, reserve_gb: float,
                tp: int, pp: int, gpus: int) -> KvCapacity:
    weights = params_per_gpu(model, tp, pp, 1) * precision_bytes(inf.weight_precision) / GB
    if model.moe and gpus > tp * pp:
        weights = params_per_gpu(model, tp, pp, gpus // (tp * pp)) * precision_bytes(inf.weight_precision) / GB
    usable = hbm_gb * utilization
    kv_gb = max(0.0, usable - weights - reserve_gb)
    per_gpu = kv_bytes_per_token_per_gpu(model, inf.kv_precision, tp, pp)
    block = block_size()
    blocks = int(kv_gb * GB // (per_gpu * block)) if per_gpu else 0
    tokens = blocks * block
    concurrency = blocks // math.ceil(inf.max_context_tokens / block)
    return KvCapacity(hbm_gb, usable, weights, reserve_gb, kv_gb, kv_bytes_per_token(model, inf.kv_precision),
                      per_gpu, tokens, concurrency)
