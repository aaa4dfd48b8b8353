"""FLOP counts of a transformer (docs/estimator.md, Training) and the conventions published
figures use.

The estimator's own convention (stated in every estimate): model FLOPs count matmuls only, forward =
2 x multiply-adds, training = 3 x forward, and the attention scores count the work a causal kernel
executes (half of s^2: `causal`). MFU divides these by the dense peak, so it never exceeds what the
hardware executed. `full` counts the whole s^2 (Megatron-LM before 2025-03, Korthikanti, NeMo <= 25.07,
LLM Foundry); converting between the two changes only the attention term.
"""

from __future__ import annotations

from validator.resolve.catalog.entries import LlmModel

CONVENTIONS = ("causal", "full")


def attention_width(model: LlmModel) -> float:
    """Per-token width of the attention-score and attention-value matmuls, (q.k dim + v dim) x heads / 2:
    a x d for standard attention; MLA's query/key heads are wider than its value heads."""
    if model.mla:
        m = model.mla
        return model.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) / 2
    return float(model.heads * model.dim_per_head)


def attention_params(model: LlmModel) -> float:
    """Weights of one layer's attention projections."""
    h, d = model.hidden, model.dim_per_head
    if model.mla:     # DeepSeek-V2 (arXiv 2405.04434) section 2.1.2: low-rank query and key-value
        m = model.mla
        q_width = model.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)
        q = (h + q_width) * m.q_lora_rank if m.q_lora_rank else h * q_width
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank * model.heads * (
            m.qk_nope_head_dim + m.v_head_dim)
        return float(q + kv + model.heads * m.v_head_dim * h)
    return float(2 * h * model.heads * d + 2 * h * model.kv_heads * d)


def mlp_params(model: LlmModel, ffn: int) -> float:
    return float((2 if model.mlp == "gelu" else 3) * model.hidden * ffn)


def dense_mlp_share(model: LlmModel) -> float:
    """Share of layers with a dense MLP (all of them for a dense model)."""
    return 1.0 if model.moe is None else model.moe.dense_layers / model.layers


def expert_matmul_params(model: LlmModel) -> float:
    """Routed-expert weights one token multiplies through in an MoE layer (top-k experts)."""
    if model.moe is None:
        return 0.0
    return model.moe.top_k * mlp_params(model, model.moe.expert_ffn_hidden)


def layer_matmul_params(model: LlmModel, active: bool = True) -> float:
    """Weights one token multiplies through in one transformer layer, averaged over the layers (MoE: the
    active experts, the shared experts and the router; dense layers at their share)."""
    attn = attention_params(model)
    if model.moe is None:
        return attn + mlp_params(model, model.ffn_hidden)
    moe = model.moe
    experts = (moe.top_k if active else moe.experts) + moe.shared_experts
    moe_mlp = experts * mlp_params(model, moe.expert_ffn_hidden) + model.hidden * moe.experts
    share = dense_mlp_share(model)
    return attn + share * mlp_params(model, model.ffn_hidden) + (1 - share) * moe_mlp


def attention_flops_per_token(model: LlmModel, seq: int, convention: str = "causal") -> float:
    """Forward FLOPs of the attention scores and the attention-weighted values, one token, one layer."""
    return 4 * seq * attention_width(model) * (0.5 if convention == "causal" else 1.0)


def forward_flops_per_token(model: LlmModel, seq: int, *, convention: str = "causal", logits: bool = True) -> float:
    """Forward FLOPs for one token of a `seq`-long sequence."""
    per_layer = 2 * layer_matmul_params(model) + attention_flops_per_token(model, seq, convention)
    head = 2 * model.vocab * model.hidden if logits else 0.0
    return model.layers * per_layer + head


def mtp_flops_per_token(model: LlmModel, seq: int, mtp_layers: int, convention: str = "causal") -> float:
    """Forward FLOPs of the multi-token prediction modules for one token (DeepSeek-V3 report, section 2.2):
    each is one transformer layer, the projection of [h; embedding] (2h -> h) and the shared LM head again.
    DeepSeek-V3 at 4K: 3 x (forward + one module) = 260.6 GFLOP per token, Megatron-Bridge's 260.0."""
    layer = 2 * layer_matmul_params(model) + attention_flops_per_token(model, seq, convention)
    return mtp_layers * (layer + 2 * 2 * model.hidden * model.hidden + 2 * model.vocab * model.hidden)


def weight_flops_per_token(model: LlmModel) -> float:
    """Forward FLOPs of the weight matmuls for one token (layers and LM head, no attention scores): the
    weight-gradient matmuls backward adds for trained weights are as many."""
    return model.layers * 2 * layer_matmul_params(model) + 2 * model.vocab * model.hidden


def training_model_flops(model: LlmModel, seq: int, tokens: float, convention: str = "causal") -> float:
    """Model FLOPs of a training step over `tokens` tokens (no recomputation)."""
    return 3 * forward_flops_per_token(model, seq, convention=convention) * tokens


def recompute_flops_per_token(model: LlmModel, seq: int, recompute: str, share: float = 1.0,
                              flash_attention: bool = True) -> float:
    """What recomputation executes again, per token: one more forward of the layers (full, on `share` of
    them), or the attention core (selective, when no fused kernel already recomputes it)."""
    if recompute == "full":
        return share * forward_flops_per_token(model, seq, logits=False)
    if recompute == "selective" and not flash_attention:
        return model.layers * attention_flops_per_token(model, seq, "full")
    return 0.0
