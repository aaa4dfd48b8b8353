"""Training memory per GPU (docs/estimator.md, Training): model states by sharding, activations
by recomputation, sequence and context parallelism, pipeline schedule and offload.

Model states, mixed-precision Adam: 2 bytes of 16-bit weights + 4 of fp32 main gradients + 12 of fp32
master weights and moments per parameter (Megatron-LM's 18; 6 + 12/d with its distributed optimizer);
ZeRO-1 shards the 12, ZeRO-2 also the gradients, over DP x CP ranks; ZeRO-3 / FSDP keeps 16 bytes per
parameter (fp32 master, its gradient, the moments) all sharded (HSDP: over its shard group), plus the
gathered 16-bit weights of the current and the prefetched layer and one layer's gradients. Expert
parameters are sharded over the expert-data-parallel ranks (DP x CP / EP).

Activations per layer (Korthikanti et al. 2022) for one micro-batch of s/CP tokens: 34 s b h bytes with
sequence parallelism (s b h (10 + 24/t) without), the MLP part scaled to the model's FFN width (and to
top-k experts), plus 5 a s^2 b without a fused attention kernel; selective recomputation drops the
s^2 term, full recomputation keeps only each layer's input (2 s b h) plus one layer's working set.
1F1B keeps p micro-batches of l/p layers in flight on the first stage (about l layers; interleaving
multiplies by 1 + (p-1)/(p v)); never more than the step's m micro-batches of the stage's layers (an
interleaved schedule with m <= p runs every forward first). Offload moves that share
of the activations to host memory.
"""

from __future__ import annotations

from validator.base.facts import fact
from validator.derive.estimate.flops import attention_params, dense_mlp_share, mlp_params
from validator.derive.estimate.memory import expert_params
from validator.read.model import Training
from validator.resolve.catalog.entries import LlmModel

GB = 1e9


@fact
class TrainingMemory:
    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    reserve_gb: float
    offloaded_gb: float = 0.0       # activations held in host memory instead (not in the total)

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb + self.reserve_gb


def modern_bytes_per_token(model: LlmModel, selective: bool = False) -> float:
    """Bytes per token one layer keeps with a fused attention kernel and no dropout (all split by TP under
    sequence parallelism): the two norm inputs and outputs (the QKV and MLP GEMM inputs), Q, K, V and the
    attention output (the fused kernel keeps no s^2 term), and per FFN unit the GEMM outputs the
    activation needs (GELU: FC1 out and its activation; SwiGLU: gate, up and their product); an MoE layer
    keeps its permuted tokens (top-k copies) and its experts' FFN outputs. Selective recomputation
    recomputes the norms and the activation functions: their outputs are not kept."""
    h, d = model.hidden, model.dim_per_head
    mla = model.mla
    q = model.heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim if mla else d)
    kv = model.heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) if mla else 2 * model.kv_heads * d
    out = model.heads * (mla.v_head_dim if mla else d)
    norms = 1 if selective else 2
    units = (2 if model.mlp == "gelu" else 3) - (1 if selective else 0)
    attention = 2 * (norms * h + q + kv + out)
    dense = 2 * (norms * h + units * model.ffn_hidden)
    share = dense_mlp_share(model)
    if model.moe is None:
        return attention + dense
    moe = model.moe
    experts = 2 * (norms * h + moe.top_k * h + (moe.top_k + moe.shared_experts) * units * moe.expert_ffn_hidden)
    return attention + share * dense + (1 - share) * experts


def activation_bytes_per_layer(model: LlmModel, t: Training, recompute: str | None = None) -> float:
    """Bytes one layer keeps for backward, one micro-batch, one GPU (before offload)."""
    p = t.parallelism
    recompute = recompute or t.recompute
    s, b, h, a, tp = t.sequence_length / p.cp, t.micro_batch, model.hidden, model.heads, p.tp
    sbh = s * b * h
    split = p.sequence_parallel or tp == 1
    if t.flash_attention:
        per_token = modern_bytes_per_token(model, recompute == "selective")
        full = s * b * per_token / tp if split else s * b * (per_token - 8 * h) / tp + s * b * 8 * h
    else:
        # Korthikanti et al. 2022 (GPT with dropout): 34 s b h (+ 5 a s^2 b unless selectively recomputed)
        softmax = 0.0 if recompute != "none" else 5 * a * t.sequence_length / h
        full = sbh / tp * (34 + softmax) if split else sbh * (10 + 24 / tp + softmax / tp)
    if recompute != "full":
        return full
    share = _recompute_share(model, t)
    kept = 2 * sbh / (tp if split else 1)
    return share * kept + (1 - share) * full


def _recompute_share(model: LlmModel, t: Training) -> float:
    if t.recompute != "full" or t.recompute_layers is None:
        return 1.0 if t.recompute == "full" else 0.0
    p = t.parallelism
    return min(1.0, t.recompute_layers * p.pp / model.layers)


def _in_flight_layers(model: LlmModel, t: Training) -> float:
    """Layers' worth of micro-batch activations the busiest (first) stage holds."""
    p = t.parallelism
    m = max(1, t.global_batch // (p.dp * t.micro_batch))
    stage = max(t.pipeline_layers) if t.pipeline_layers else -(-model.layers // p.pp)
    interleave = 1 + (p.pp - 1) / (p.pp * p.vpp) if p.vpp > 1 else 1.0
    # Megatron's interleaved warm-up runs 2(p-1) + (v-1)p chunks of l/(pv) layers ahead, p(1 + (p-1)/(pv))
    # micro-batches' worth, but never more than the step's m micro-batches x v chunks (with m <= p every
    # forward runs first: m micro-batches of the stage's layers)
    return stage * min(p.pp * interleave, m)


def layer_params(model: LlmModel, tp: int, ep: int) -> float:
    """Parameters of one transformer layer on one GPU (FSDP gathers a layer at a time)."""
    dense = attention_params(model) + dense_mlp_share(model) * mlp_params(model, model.ffn_hidden)
    experts = expert_params(model) / model.layers
    return dense / tp + experts / (tp * ep)


def model_states(model: LlmModel, t: Training) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per GPU."""
    p = t.parallelism
    total = model.params_b * 1e9
    experts = min(expert_params(model), total)
    dense = (total - experts) / (p.tp * p.pp)
    local_experts = experts / (p.tp * p.pp * p.ep)
    n = p.dp * p.cp
    shard = min(n, t.sharding_group) if t.sharding_group and t.zero_stage == 3 else n
    shard_e = max(1, min(shard, n // p.ep))
    opt_bytes = 12.0 if t.optimizer == "adam" else 4.0
    trained = 1.0 if t.trainable_params_b is None else min(1.0, t.trainable_params_b / model.params_b)

    def states(psi: float, ranks: int) -> tuple[float, float, float]:
        if t.zero_stage >= 3:             # fp32 master shard, its gradient and the moments: 16 B / ranks
            return 2.0 * psi / ranks, 2.0 * psi / ranks, opt_bytes * psi / ranks
        # 16-bit weights, fp32 main gradients (Megatron accumulates and reduces them in fp32), fp32
        # master weights and moments: 18 bytes per parameter unsharded (Megatron's 6 + 12/d with the
        # distributed optimizer)
        w, g, o = 2.0 * psi, 4.0 * psi, opt_bytes * psi
        if t.zero_stage >= 1:
            o /= ranks
        if t.zero_stage >= 2:
            g /= ranks
        return w, g, o

    dw, dg, do = states(dense, shard)
    ew, eg, eo = states(local_experts, shard_e)
    w, g = dw + ew, (dg + eg) * trained          # frozen weights: no gradient, no optimizer state
    do, eo = do * trained, eo * trained
    if t.zero_stage >= 3:                 # gathered weights of two layers (current, prefetched), one layer's
        w += 2 * 2 * layer_params(model, p.tp, p.ep)          # gradients before their reduce-scatter
        g += 2 * layer_params(model, p.tp, p.ep) * trained
    return w, g, do + eo


def training_memory(model: LlmModel, t: Training, reserve_gb: float) -> TrainingMemory:
    p = t.parallelism
    weights, grads, opt = model_states(model, t)
    per_layer = activation_bytes_per_layer(model, t)
    activations = per_layer * _in_flight_layers(model, t)
    if t.recompute == "full":             # the layer being recomputed holds its full working set
        activations += activation_bytes_per_layer(model, t, "selective")
    s, b, h, tp = t.sequence_length / p.cp, t.micro_batch, model.hidden, p.tp
    activations += 4 * s * b * h / tp * (1 + model.vocab / h)      # embedding output, fp32 logits and their grad
    offload = t.activation_offload or 0.0
    return TrainingMemory(weights / GB, grads / GB, opt / GB, activations * (1 - offload) / GB, reserve_gb,
                          activations * offload / GB)
