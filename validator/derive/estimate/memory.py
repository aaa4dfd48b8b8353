"""Memory per GPU, the helpers both halves share: bytes per precision, the paged-KV block size,
parameters per GPU. Training memory is in training_memory.py; serving weights and the KV cache in kv.py."""

from __future__ import annotations

from functools import cache

from validator.base.estimate_tables import precision as precision_table
from validator.resolve.catalog.entries import LlmModel

GB = 1e9


@cache
def precision_bytes(precision: str) -> float:
    return precision_table().bytes[precision]


def block_size() -> int:
    return precision_table().vllm_block_size


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
