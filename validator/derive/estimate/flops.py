"""FLOP counts of a transformer (shared/docs/estimator-notes.md 2.1-2.2).

Convention (stated in every estimate): model FLOPs count matmuls only, forward = 2 x multiply-adds,
training = 3 x forward, attention scores with the full s^2 (Megatron / Korthikanti convention, the
MFU numerator of the published runs). Executed (hardware) FLOPs add recomputation, and a causal fused
kernel executes half of the s^2 term.
"""

from __future__ import annotations

from validator.resolve.catalog.entries import LlmModel


def attn_width(model: LlmModel) -> int:
    """Query width a x d (equals the hidden size except for models with a separate head_dim)."""
    return model.heads * model.dim_per_head


def layer_matmul_params(model: LlmModel, active: bool = True) -> float:
    """Weights one token multiplies through in one transformer layer (MoE: the active experts)."""
    h, d = model.hidden, model.dim_per_head
    if model.mla:
        m = model.mla
        q = h * model.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * model.heads * (
            m.qk_nope_head_dim + m.v_head_dim)
        attn = q + kv + model.heads * m.v_head_dim * h
    else:
        attn = 2 * h * model.heads * d + 2 * h * model.kv_heads * d
    mats = 2 if model.mlp == "gelu" else 3
    if model.moe is None:
        return float(attn + mats * h * model.ffn_hidden)
    moe = model.moe
    experts = (moe.top_k if active else moe.experts) + moe.shared_experts
    moe_mlp = mats * h * moe.expert_ffn_hidden * experts + h * moe.experts
    dense_mlp = mats * h * model.ffn_hidden
    share = moe.dense_layers / model.layers
    return float(attn + share * dense_mlp + (1 - share) * moe_mlp)


def forward_flops_per_token(model: LlmModel, seq: int, *, causal: bool = False, logits: bool = True) -> float:
    """Forward FLOPs for one token of a `seq`-long sequence (full s^2 attention unless causal)."""
    attention = 4 * seq * attn_width(model) * (0.5 if causal else 1.0)
    per_layer = 2 * layer_matmul_params(model) + attention
    head = 2 * model.vocab * model.hidden if logits else 0.0
    return model.layers * per_layer + head


def training_model_flops(model: LlmModel, seq: int, tokens: float) -> float:
    """Model FLOPs of a training step over `tokens` tokens (no recomputation, full s^2)."""
    return 3 * forward_flops_per_token(model, seq) * tokens
