"""INF001 replica-fit: Replica weights fit in HBM, and its parallel layout adds up."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


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
    precision = ctx.inference.weight_precision
    for pool in ctx.derived.pools:
        path, shape, kv = pool.path, pool.setup.shape, pool.kv
        if kv.weights_gb + kv.reserve_gb > kv.usable_gb:
            yield Hit(f"{kv.weights_gb:.1f} GB of {precision} weights + {kv.reserve_gb:g}"
                      f" GB reserve per GPU > {kv.usable_gb:.1f} GB usable HBM", (*path, "gpus"))
        stage = shape.gpus // shape.pp
        if shape.tp * shape.pp * shape.dp != shape.gpus:
            layout = shape.tp * shape.pp * shape.dp
            yield Hit(f"TP {shape.tp} x PP {shape.pp} x DP-attention {shape.dp} = {layout} GPUs, but the replica has "
                      f"{shape.gpus}", (*path, "gpus"))
        elif shape.ep > stage or stage % shape.ep:
            yield Hit(f"EP {shape.ep} does not divide the {stage} GPUs of a pipeline stage", (*path, "ep"))


RULE = Rule("INF001", "replica-fit", "Replica weights fit in HBM", "error", "inference", replica_fit, waivable=False)
