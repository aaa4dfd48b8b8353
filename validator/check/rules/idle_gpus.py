"""TRN011 idle-gpus: Every GPU runs the job."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def idle_gpus(ctx: Context) -> Iterator[Hit]:
    """The training job (TP x PP x DP x CP GPUs) uses every GPU of the cluster. GPUs that no job uses add
    capex and power but no tokens/s: the estimate is the job's, so a cluster twice the job's size shows the
    same throughput as one that fits it. Said as information (spares, a second job or a planned scale-up
    may be intended); raise DP to use them, or size `compute.count` to the job.

    Source: Megatron-LM world size = TP x PP x DP x CP (Narayanan et al., SC 2021); the estimate is computed
    for that many GPUs (docs/estimator.md).
    Fix: raise `training.parallelism.dp` (and the global batch) to use every GPU, or lower `compute.count`.
    Example:
        training: {parallelism: {tp: 8, pp: 1, dp: 8}}   # 64 of the 256 GPUs
    """
    p = ctx.training.parallelism
    used = p.tp * p.pp * p.dp * p.cp
    gpus = ctx.topology.gpus
    if used < gpus:
        per_server = ctx.resolved.server.gpus
        yield Hit(f"the job uses TP {p.tp} x PP {p.pp} x DP {p.dp} x CP {p.cp} = {used:,} of the {gpus:,} GPUs: "
                  f"{gpus - used:,} GPUs ({(gpus - used) // per_server:,} servers) run nothing and add no "
                  "throughput to the estimate", ("training", "parallelism", "dp"))


RULE = Rule("TRN011", "idle-gpus", "Every GPU runs the job", "info", "training", idle_gpus)
