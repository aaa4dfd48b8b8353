"""Memory per GPU: training states and activations (Korthikanti et al. 2022, ZeRO). Formulas in
shared/docs/estimator-notes.md section 2.6; serving weights and the KV cache are in kv.py."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from validator.base.resources import load_data
from validator.read.model import Training
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


@dataclass(frozen=True)
class TrainingMemory:
    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    reserve_gb: float

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb + self.reserve_gb


def training_memory(model: LlmModel, t: Training, reserve_gb: float) -> TrainingMemory:
    p = t.parallelism
    psi = params_per_gpu(model, p.tp, p.pp, p.ep)
    shards = p.dp * p.cp
    # mixed-precision Adam: 2 B weights + 2 B gradients + 12 B fp32 master/momentum/variance per parameter
    opt_bytes = 12.0 if t.optimizer == "adam" else 4.0
    weights, grads, opt = 2.0, 2.0, opt_bytes
    if t.zero_stage >= 1:
        opt /= shards
    if t.zero_stage >= 2:
        grads /= shards
    if t.zero_stage >= 3:
        weights /= shards
    s, b, h, a = t.sequence_length / p.cp, t.micro_batch, model.hidden, model.heads
    tp = p.tp
    attn = 0.0 if t.flash_attention else 5 * a * s / h
    if t.recompute == "full":
        per_layer = 2 * s * b * h / (tp if p.sequence_parallel else 1)
    elif t.recompute == "selective":
        per_layer = 34 * s * b * h / tp if p.sequence_parallel else s * b * h * (10 + 24 / tp)
    else:
        per_layer = s * b * h / tp * (34 + attn) if p.sequence_parallel else \
            s * b * h * (10 + 24 / tp + attn / tp)
    interleave = 1 + (p.pp - 1) / (p.pp * p.vpp) if p.vpp > 1 else 1.0
    # 1F1B keeps pp micro-batches of l/pp layers on the first stage: about l layers' worth
    activations = per_layer * model.layers * interleave
    activations += 4 * s * b * h / tp * (1 + model.vocab / h)
    return TrainingMemory(psi * weights / GB, psi * grads / GB, psi * opt / GB, activations / GB, reserve_gb)
