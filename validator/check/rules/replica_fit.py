"""INF001 replica-fit: Replica weights fit in HBM, and its parallel layout adds up."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import pools, utilization
from validator.derive.estimate.kv import shape_of, weight_bytes_per_gpu


def replica_fit(ctx: Context) -> Iterator[Hit]:
    """A replica's weights at their precision plus the runtime reserve fit the replica's HBM
    (HBM x gpu_memory_utilization per GPU, as serving engines allocate it): attention, dense layers and
    shared experts split by TP x PP, routed experts split over every GPU of a pipeline stage. The layout
    must add up: gpus = tp x pp x dp_attention, and the expert-parallel group divides a stage's GPUs.

    Source: vLLM memory profiling (weights + activations + non-torch memory within
    gpu_memory_utilization; the startup log prints each term); SGLang DP attention and wide EP
    (tp x dp = moe_tp x ep: attention split by TP, routed experts over every GPU of a stage).
    Fix: use more GPUs per replica (higher TP or EP), a lower weight precision, or GPUs with more HBM;
    make gpus equal tp x pp x dp_attention.
    Example:
        inference: {model: llama3-405b, replica: {gpus: 1}}   # 811 GB of bf16 weights on one GPU
    """
    inf = ctx.inference
    model = ctx.resolved.model
    hbm = ctx.resolved.gpu.memory_gb * utilization(ctx)
    for path, rep, _ in pools(ctx):
        shape = shape_of(rep)
        weights = weight_bytes_per_gpu(model, inf.weight_precision, shape) / 1e9
        need = weights + ctx.threshold("inference_reserve_gb")
        if need > hbm:
            yield Hit(f"{weights:.1f} GB of {inf.weight_precision} weights + {ctx.threshold('inference_reserve_gb'):g}"
                      f" GB reserve per GPU > {hbm:.1f} GB usable HBM", (*path, "gpus"))
        if shape.tp * shape.pp * shape.dp != rep.gpus:
            layout = shape.tp * shape.pp * shape.dp
            yield Hit(f"TP {shape.tp} x PP {shape.pp} x DP-attention {shape.dp} = {layout} GPUs, but the replica has "
                      f"{rep.gpus}", (*path, "gpus"))
        elif rep.ep > rep.gpus // rep.pp or (rep.gpus // rep.pp) % rep.ep:
            yield Hit(f"EP {rep.ep} does not divide the {rep.gpus // rep.pp} GPUs of a pipeline stage", (*path, "ep"))


RULE = Rule("INF001", "replica-fit", "Replica weights fit in HBM", "error", "inference", replica_fit, waivable=False)
