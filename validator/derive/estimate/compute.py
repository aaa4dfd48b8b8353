"""Compute time of one pipeline stage for one micro-batch on one GPU (docs/estimator.md, Training).

Linear layers run at the design's precision and at a size-dependent GEMM efficiency (the Calculon idea:
small GEMMs run further from their peak than large ones); expert GEMMs are sized per expert. The
attention core and the LM head run in 16 bit (Transformer Engine keeps them out of FP8). Memory-bound
element-wise work (norms, activations, dropout, softmax, MoE token permutation, the loss over the
vocabulary) moves its bytes at HBM speed. Backward = 2 x forward; full recomputation runs the forward
again on its share of the layers.
"""

from __future__ import annotations

from validator.base.estimate_tables import precision as precision_table
from validator.base.facts import fact
from validator.derive.estimate.constants import TrainingConstants, training_table
from validator.derive.estimate.flops import (
    attention_flops_per_token,
    attention_params,
    dense_mlp_share,
    expert_matmul_params,
    mlp_params,
)
from validator.derive.estimate.hardware import peak16_flops, peak_flops
from validator.derive.estimate.setup import TrainingSetup
from validator.resolve.catalog.entries import LlmModel


def gemm_efficiency(c: TrainingConstants, gflop: float) -> float:
    return c.gemm_max * gflop / (gflop + c.gemm_half_gflop) if gflop > 0 else 0.0


@fact
class LayerCompute:
    """Seconds for one transformer layer, one micro-batch, one GPU."""

    forward: float        # matmuls + attention core + element-wise + fixed overhead
    attention: float      # of which the attention core
    recompute: float      # extra work backward does again
    gemm_efficiency: float
    matmul: float = 0.0   # of which the weight matmuls
    trainable: float = 1.0    # share of the weights trained (frozen ones compute no weight gradient)
    attention_backward: float | None = None   # the attention core's backward (None: 2.5 x forward)

    @property
    def train(self) -> float:
        """Forward + backward, without recomputation: backward is 2 x forward (input and weight gradients),
        except the fused attention kernel's, which recomputes the scores and runs 5 matmuls to forward's 2
        (2.5 x, or its softmax-exp bound: `attention_times`); frozen weights skip their weight-gradient
        matmuls."""
        backward = 2.5 * self.attention if self.attention_backward is None else self.attention_backward
        return 3 * self.forward - 2 * self.attention + backward - (1 - self.trainable) * self.matmul


def _matmul_time(s: TrainingSetup, c: TrainingConstants, peak: float) -> tuple[float, float]:
    """Seconds of one layer's forward matmuls, and the efficiency of its dense part."""
    model, tokens = s.model, s.tokens_per_microbatch
    dense_params = attention_params(model) + dense_mlp_share(model) * mlp_params(model, model.ffn_hidden)
    moe = model.moe
    if moe is not None:
        dense_params += (1 - dense_mlp_share(model)) * (
            moe.shared_experts * mlp_params(model, moe.expert_ffn_hidden) + model.hidden * moe.experts)
    dense = 2 * dense_params * tokens / s.tp
    eff = gemm_efficiency(c, dense / 1e9)
    time = dense / (peak * eff)
    if moe is not None:
        moe_layer = 2 * expert_matmul_params(model) * tokens / s.tp     # one MoE layer, all local experts
        per_expert = moe_layer * s.ep / moe.experts       # one expert's GEMMs on this GPU (balanced routing)
        experts = (1 - dense_mlp_share(model)) * moe_layer
        time += max(experts / (peak * gemm_efficiency(c, per_expert / 1e9)), expert_weight_floor(s))
    return time, eff


def expert_weight_floor(s: TrainingSetup) -> float:
    """The least time of one layer's grouped expert GEMMs (averaged over the layers, as the matmul time
    is): every local expert's weights are read from HBM once per pass, however few tokens each expert gets,
    so a GPU holding E / EP experts cannot finish them faster than streaming their bytes."""
    moe = s.model.moe
    if moe is None:
        return 0.0
    local = moe.experts / s.ep * mlp_params(s.model, moe.expert_ffn_hidden) / s.tp
    widths = precision_table().bytes        # bytes per value (precision.yaml); a 16-bit one for any other
    stream = local * widths.get(s.precision, widths["bf16"]) / (s.gpu.memory_bandwidth_tbs * 1e12)
    return (1 - dense_mlp_share(s.model)) * stream


def attention_times(s: TrainingSetup, c: TrainingConstants) -> tuple[float, float]:
    """Forward and backward seconds of one layer's attention core, one micro-batch. The matmuls run at
    `attention_efficiency` of the 16-bit peak (backward: 5 matmuls to forward's 2, 2.5 x); a fused kernel's
    softmax exponentials run on the SFUs, overlapped with the matmuls (FlashAttention-3/4), so each pass
    takes at least its exps over the SFU rate, `tensor_flops_per_exp` (efficiency.yaml
    training.softmax_exp) below the 16-bit peak: one exp per score forward, one more backward (the
    probabilities are recomputed)."""
    tokens = s.tokens_per_microbatch
    peak16 = min(peak_flops(s.gpu, s.precision), peak16_flops(s.gpu))
    convention = "causal" if s.flash_attention else "full"
    flops = attention_flops_per_token(s.model, s.seq, convention) * tokens / s.tp
    forward = flops / (peak16 * c.attention_efficiency)
    ratio = training_table().tensor_flops_per_exp.get(s.gpu.id, 0.0) if s.flash_attention else 0.0
    exps = s.model.heads * s.seq * (0.5 if convention == "causal" else 1.0) * tokens / s.tp
    floor = exps * ratio / peak16
    return max(forward, floor), max(2.5 * forward, floor)


def _elementwise_bytes(s: TrainingSetup) -> float:
    """Bytes one layer's element-wise work reads and writes in forward (Korthikanti activation bytes;
    the s^2 softmax term only without a fused attention kernel; MoE token permutation and un-permutation)."""
    model, tokens = s.model, s.tokens_per_microbatch
    h = model.hidden
    softmax = 0.0 if s.flash_attention else 5 * model.heads * s.seq / h
    split = h * (34 + softmax) / s.tp
    per_token = split if s.sequence_parallel else h * (10 + 24 / s.tp + softmax / s.tp)
    if model.moe is not None:
        per_token += (1 - dense_mlp_share(model)) * model.moe.top_k * h * 2 * 4 / s.tp
    if s.precision in ("fp8", "fp4", "int8", "int4"):
        # Transformer Engine casts each GEMM input (the QKV, projection and two MLP inputs) to 8/4 bit:
        # 2 bytes read, 1 written (and its transpose for backward)
        per_token += 3 * (3 * h + _ffn_per_token(model)) / s.tp
    return tokens * per_token


def _ffn_per_token(model: LlmModel) -> float:
    """FFN width one token runs through (MoE: its top-k and shared experts)."""
    share = dense_mlp_share(model)
    if model.moe is None:
        return float(model.ffn_hidden)
    moe = model.moe
    return share * model.ffn_hidden + (1 - share) * (moe.top_k + moe.shared_experts) * moe.expert_ffn_hidden


def layer_compute(s: TrainingSetup, c: TrainingConstants) -> LayerCompute:
    peak = peak_flops(s.gpu, s.precision)
    matmul, eff = _matmul_time(s, c, peak)
    tokens = s.tokens_per_microbatch
    attention, attention_backward = attention_times(s, c)
    hbm = s.gpu.memory_bandwidth_tbs * 1e12
    elementwise = c.elementwise_factor * _elementwise_bytes(s) / hbm
    forward = matmul + attention + elementwise + c.layer_overhead_s
    if s.recompute == "full":
        recompute = s.recompute_share * forward
    elif s.recompute == "selective" and not s.flash_attention:
        softmax = 5 * s.model.heads * s.seq * tokens / s.tp
        recompute = attention + c.elementwise_factor * softmax / hbm
    elif s.recompute == "selective":      # the norms and the MLP activation, read and written once more
        h = s.model.hidden
        recompute = tokens * (2 * 2 * h + 2 * 2 * _ffn_per_token(s.model)) / s.tp / hbm
    else:
        recompute = 0.0
    return LayerCompute(forward=forward, attention=attention, recompute=recompute, gemm_efficiency=eff,
                        matmul=matmul, trainable=s.trainable_share, attention_backward=attention_backward)


def head_compute(s: TrainingSetup, c: TrainingConstants) -> float:
    """Forward + backward of the LM head and the loss, one micro-batch, on the last stage: the logits
    GEMM in 16 bit and the fp32 logits read and written by the softmax and cross-entropy."""
    model, tokens = s.model, s.tokens_per_microbatch
    flops = 2 * model.vocab * model.hidden * tokens / s.tp
    peak16 = min(peak_flops(s.gpu, s.precision), peak16_flops(s.gpu))
    gemm = (2 + s.trainable_share) * flops / (peak16 * gemm_efficiency(c, flops / 1e9))
    loss = c.elementwise_factor * 4 * tokens * model.vocab / s.tp * 4 / (s.gpu.memory_bandwidth_tbs * 1e12)
    return gemm + loss


def optimizer_time(params_per_gpu: float, shards: int, s: TrainingSetup, c: TrainingConstants) -> float:
    """The optimizer step: mixed-precision Adam reads and writes about 32 bytes per parameter of the
    GPU's shard (fp32 master weight, two moments, the gradient, the 16-bit copy) at HBM speed."""
    return c.elementwise_factor * 32 * params_per_gpu / shards / (s.gpu.memory_bandwidth_tbs * 1e12)
