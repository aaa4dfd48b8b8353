"""TRN004 memory-fit: Training memory fits in HBM."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def memory_fit(ctx: Context) -> Iterator[Hit]:
    """Per GPU, weights + gradients + optimizer states (by ZeRO stage / FSDP / HSDP group) + activations
    (by recomputation, sequence and context parallelism, pipeline schedule, offload) + a reserve must fit
    in HBM. The estimate is good to about 10 % (Korthikanti's measured activation and state memory within
    2 %; published runs up to 9 % over it ran): beyond that tolerance it is an error, within it a warning.

    Source: ZeRO (Rajbhandari et al. 2020) and Megatron-LM's distributed optimizer (18 and 6 + 12/d bytes
    per parameter); activation memory from Korthikanti et al., "Reducing Activation Recomputation in Large
    Transformer Models" (2022) and the tensors a fused-attention layer keeps.
    Fix: raise TP, PP or CP, use a higher ZeRO stage, recompute activations or offload them.
    Example:
        training: {model: llama3-70b, zero_stage: 0, parallelism: {tp: 8, pp: 1}}   # 168 GB per 80 GB GPU
    """
    report = ctx.training_report
    mem, hbm = report.memory, report.hbm_gb
    if mem.total_gb <= hbm:
        return
    tolerance = ctx.threshold("memory_fit_tolerance_pct")
    over = mem.total_gb > hbm * (1 + tolerance / 100)
    yield Hit(f"{mem.total_gb:.1f} GB per GPU > {hbm:g} GB HBM: weights {mem.weights_gb:.1f} + gradients "
              f"{mem.gradients_gb:.1f} + optimizer {mem.optimizer_gb:.1f} + activations "
              f"{mem.activations_gb:.1f} + reserve {mem.reserve_gb:.1f} GB"
              + ("" if over else f" (within the estimate's {tolerance:g} % tolerance: may still fit)"),
              ("training", "parallelism"), severity=None if over else "warning")


RULE = Rule("TRN004", "memory-fit", "Training memory fits in HBM", "error", "training",
            memory_fit, thresholds=("memory_reserve_gb", "memory_fit_tolerance_pct"))
