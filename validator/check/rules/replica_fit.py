"""INF001 replica-fit: Replica weights fit in HBM."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import pools, utilization
from validator.derive.estimate.memory import params_per_gpu, precision_bytes


def replica_fit(ctx: Context) -> Iterator[Hit]:
    """A replica's weights at their precision plus the runtime reserve fit the replica's HBM
    (HBM x gpu_memory_utilization per GPU, as serving engines allocate it).

    Source: vLLM memory profiling (weights + activations + non-torch memory within
    gpu_memory_utilization; the startup log prints each term).
    Fix: use more GPUs per replica (higher TP), a lower weight precision, or GPUs with more HBM.
    Example:
        inference: {model: llama3-405b, replica: {gpus: 1}}   # 811 GB of bf16 weights on one GPU
    """
    inf = ctx.inference
    model = ctx.resolved.model
    hbm = ctx.resolved.gpu.memory_gb * utilization(ctx)
    for path, rep, _ in pools(ctx):
        weights = params_per_gpu(model, rep.tp, rep.pp, rep.ep) * precision_bytes(inf.weight_precision) / 1e9
        need = weights + ctx.threshold("inference_reserve_gb")
        if need > hbm:
            yield Hit(f"{weights:.1f} GB of {inf.weight_precision} weights + {ctx.threshold('inference_reserve_gb'):g}"
                      f" GB reserve per GPU > {hbm:.1f} GB usable HBM", (*path, "gpus"))
        if rep.tp * rep.pp * rep.ep > rep.gpus:
            yield Hit(f"TP {rep.tp} x PP {rep.pp} x EP {rep.ep} needs more than the replica's {rep.gpus} GPUs",
                      (*path, "gpus"))


RULE = Rule("INF001", "replica-fit", "Replica weights fit in HBM", "error", "inference", replica_fit, waivable=False)
