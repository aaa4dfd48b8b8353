"""TRN004 memory-fit: Training memory fits in HBM."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.derive.estimate.memory import training_memory


def memory_fit(ctx: Context) -> Iterator[Hit]:
    """Per GPU, weights + gradients + optimizer states (by ZeRO stage) + activations (by recompute mode)
    + a reserve must fit in HBM.

    Source: ZeRO (Rajbhandari et al. 2020) 16 bytes per parameter for mixed-precision Adam; activation
    memory from Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (2022).
    Fix: raise TP or PP, use a higher ZeRO stage, or recompute activations.
    Example:
        training: {model: llama3-70b, zero_stage: 0, parallelism: {tp: 8, pp: 1}}   # 168 GB per 80 GB GPU
    """
    t = ctx.training
    model = ctx.resolved.model
    mem = training_memory(model, t, ctx.threshold("memory_reserve_gb"))
    hbm = ctx.resolved.gpu.memory_gb
    if mem.total_gb > hbm:
        yield Hit(f"{mem.total_gb:.1f} GB per GPU > {hbm:g} GB HBM: weights {mem.weights_gb:.1f} + gradients "
                  f"{mem.gradients_gb:.1f} + optimizer {mem.optimizer_gb:.1f} + activations "
                  f"{mem.activations_gb:.1f} + reserve {mem.reserve_gb:.1f} GB", ("training", "parallelism"))


RULE = Rule("TRN004", "memory-fit", "Training memory fits in HBM", "error", "training",
            memory_fit, thresholds=("memory_reserve_gb",))
