"""Weights and KV cache per GPU of a serving replica (docs/estimator.md,
Inference; vLLM KV cache sizing): GQA KV heads split by TP, the MLA latent kept whole on every TP rank,
layers split by PP, attention data-parallel ranks each holding the KV of their own requests, routed
experts sharded over every GPU of a pipeline stage (tp x dp_attention = ep x moe_tp)."""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.derive.estimate.flops import attention_params
from validator.derive.estimate.memory import block_size, precision_bytes
from validator.read.inference import Inference, Replica
from validator.resolve.catalog.entries import LlmModel

GB = 1e9


@fact
class Shape:
    """The parallel layout of one replica: gpus = tp x pp x dp (attention ranks); experts over ep."""

    gpus: int
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1

    @property
    def rank_gpus(self) -> int:
        """GPUs of one attention rank (TP x PP): the unit that holds one request's KV cache."""
        return self.tp * self.pp


def shape_of(rep: Replica) -> Shape:
    dp = rep.dp_attention or max(1, rep.gpus // (rep.tp * rep.pp))
    return Shape(rep.gpus, rep.tp, rep.pp, rep.ep, dp)


@fact
class Params:
    """Parameters of one transformer layer of each kind, and the LM head."""

    attention: float       # per layer
    dense_mlp: float       # per dense layer
    shared: float          # per MoE layer: shared experts + router
    expert: float          # one routed expert of one MoE layer
    dense_layers: int
    moe_layers: int
    head: float            # LM head (vocab x hidden)


def layer_params(model: LlmModel) -> Params:
    h = model.hidden
    attn = attention_params(model)
    mats = 2 if model.mlp == "gelu" else 3
    dense = float(mats * h * model.ffn_hidden)
    head = float(model.vocab * h)
    if model.moe is None:
        return Params(attn, dense, 0.0, 0.0, model.layers, 0, head)
    moe = model.moe
    shared = float(mats * h * moe.expert_ffn_hidden * moe.shared_experts + h * moe.experts)
    expert = float(mats * h * moe.expert_ffn_hidden)
    return Params(attn, dense, shared, expert, moe.dense_layers, model.layers - moe.dense_layers, head)


def weight_bytes_per_gpu(model: LlmModel, precision: str, shape: Shape) -> float:
    """Weights one GPU holds: attention, dense MLP, shared experts and the LM head split by TP x PP
    (replicated over attention ranks); routed experts split over all GPUs of a stage."""
    p = layer_params(model)
    b = precision_bytes(precision)
    heads = 1 if model.tied_embeddings else 2      # input embedding and LM head
    replicated = model.layers * p.attention + p.dense_layers * p.dense_mlp + p.moe_layers * p.shared + heads * p.head
    experts = p.moe_layers * p.expert * (model.moe.experts if model.moe else 0)
    return b * (replicated / (shape.tp * shape.pp) + experts / shape.gpus)


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


@fact
class KvCapacity:
    hbm_gb: float
    usable_gb: float          # HBM x utilization
    weights_gb: float         # per GPU
    reserve_gb: float
    kv_gb: float              # left for the KV cache, per GPU
    kv_bytes_per_token: float            # whole model
    kv_bytes_per_token_per_gpu: float
    ranks: int                # attention ranks of the replica (each holds its own requests' KV)
    tokens_per_rank: int
    tokens_per_replica: int
    max_concurrency: int      # requests at max_context_tokens, whole replica


def kv_capacity(model: LlmModel, inf: Inference, hbm_gb: float, utilization: float, reserve_gb: float,
                tp: int, pp: int, gpus: int, ep: int = 1, dp: int | None = None) -> KvCapacity:
    """vLLM's sizing: (HBM x utilization - weights - reserve) // (block bytes) blocks per GPU, and
    max concurrency = blocks // cdiv(max_context, block), per attention rank, times the ranks."""
    shape = Shape(gpus, tp, pp, ep, dp or max(1, gpus // (tp * pp)))
    weights = weight_bytes_per_gpu(model, inf.weight_precision, shape) / GB
    usable = hbm_gb * utilization
    kv_gb = max(0.0, usable - weights - reserve_gb)
    per_gpu = kv_bytes_per_token_per_gpu(model, inf.kv_precision, tp, pp)
    block = block_size()
    blocks = int(kv_gb * GB // (per_gpu * block)) if per_gpu else 0
    per_request = math.ceil(inf.max_context_tokens / block)
    return KvCapacity(hbm_gb, usable, weights, reserve_gb, kv_gb, kv_bytes_per_token(model, inf.kv_precision),
                      per_gpu, shape.dp, blocks * block, blocks * block * shape.dp,
                      (blocks // per_request) * shape.dp)
