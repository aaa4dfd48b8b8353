"""TRN005 parallelism-consistency: Parallelism degrees are consistent."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def parallelism_consistency(ctx: Context) -> Iterator[Hit]:
    """TP x PP x DP x CP is the number of GPUs used and must not exceed the GPUs present; every pipeline
    stage holds at least one layer per virtual stage (layers need not divide by PP: as Megatron-LM
    allows, the first and last stages take fewer, or `pipeline_layers` declares the split, which must
    have PP entries summing to the layers); attention and KV heads divide by TP; the global batch
    divides by DP x micro-batch; EP divides the experts and the DP x CP ranks; an HSDP sharding group
    divides DP x CP.

    Source: Megatron-LM argument checks (Narayanan et al. 2021; Korthikanti et al. 2022;
    --decoder-first/last-pipeline-num-layers); PyTorch HSDP device mesh (replicate x shard).
    Fix: change the degrees so the products and divisions come out whole.
    Example:
        training: {global_batch: 250, parallelism: {dp: 32}}   # 250 is not a multiple of 32
    """
    t = ctx.training
    p = t.parallelism
    used = p.tp * p.pp * p.dp * p.cp
    gpus = ctx.topology.gpus
    base = ("training", "parallelism")
    if used > gpus:
        yield Hit(f"TP {p.tp} x PP {p.pp} x DP {p.dp} x CP {p.cp} = {used} GPUs, but the cluster has {gpus}",
                  (*base, "dp"))
    yield from _pipeline(ctx)
    yield from _divisions(ctx)


def _pipeline(ctx: Context) -> Iterator[Hit]:
    t = ctx.training
    p = t.parallelism
    layers = ctx.resolved.model.layers
    if t.pipeline_layers is not None:
        declared = t.pipeline_layers
        if len(declared) != p.pp or sum(declared) != layers:
            yield Hit(f"pipeline_layers {declared} must have PP = {p.pp} entries summing to the model's {layers} "
                      "layers", ("training", "pipeline_layers"))
            return
    stages = ctx.training_report.setup.stage_layers   # the declared split, else Megatron-LM's default one
    if p.vpp > 1 and min(stages) < p.vpp:
        yield Hit(f"a pipeline stage with {min(stages)} layers cannot hold {p.vpp} virtual stages "
                  f"(stages: {list(stages)})", ("training", "parallelism", "vpp"))
    elif min(stages) < 1 and t.pipeline_layers is None:
        yield Hit(f"{layers} layers cannot fill PP {p.pp} stages", ("training", "parallelism", "pp"))


def _divisions(ctx: Context) -> Iterator[Hit]:
    t = ctx.training
    p = t.parallelism
    model = ctx.resolved.model
    base = ("training", "parallelism")
    if model.heads % p.tp or (model.kv_heads % p.tp and p.tp % model.kv_heads):
        yield Hit(f"{model.heads} attention heads / {model.kv_heads} KV heads do not divide by TP {p.tp}",
                  (*base, "tp"))
    if t.global_batch % (p.dp * t.micro_batch):
        yield Hit(f"global batch {t.global_batch} is not divisible by DP {p.dp} x micro-batch {t.micro_batch}",
                  ("training", "global_batch"))
    if p.ep > 1:
        experts = model.moe.experts if model.moe else 1
        if experts % p.ep or (p.dp * p.cp) % p.ep:
            yield Hit(f"EP {p.ep} must divide the {experts} experts and DP x CP = {p.dp * p.cp}", (*base, "ep"))
    if t.sharding_group is not None and (t.zero_stage != 3 or (p.dp * p.cp) % t.sharding_group):
        yield Hit(f"sharding_group {t.sharding_group} needs zero_stage 3 and must divide DP x CP = {p.dp * p.cp}",
                  ("training", "sharding_group"))


RULE = Rule("TRN005", "parallelism-consistency", "Parallelism degrees are consistent", "error", "training",
            parallelism_consistency, waivable=False)
