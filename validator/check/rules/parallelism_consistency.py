"""TRN005 parallelism-consistency: Parallelism degrees are consistent."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def parallelism_consistency(ctx: Context) -> Iterator[Hit]:
    """TP x PP x DP x CP is the number of GPUs used and must not exceed the GPUs present; layers divide by
    PP x virtual stages; attention and KV heads divide by TP; the global batch divides by DP x micro-batch;
    EP divides the experts and the DP x CP ranks.

    Source: Megatron-LM argument checks (Narayanan et al. 2021; Korthikanti et al. 2022).
    Fix: change the degrees so the products and divisions come out whole.
    Example:
        training: {global_batch: 250, parallelism: {dp: 32}}   # 250 is not a multiple of 32
    """
    t = ctx.training
    p = t.parallelism
    model = ctx.resolved.model
    used = p.tp * p.pp * p.dp * p.cp
    gpus = ctx.topology.gpus
    base = ("training", "parallelism")
    if used > gpus:
        yield Hit(f"TP {p.tp} x PP {p.pp} x DP {p.dp} x CP {p.cp} = {used} GPUs, but the cluster has {gpus}",
                  (*base, "dp"))
    if model.layers % (p.pp * p.vpp):
        yield Hit(f"{model.layers} layers do not divide into PP {p.pp} x {p.vpp} virtual stages", (*base, "pp"))
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


RULE = Rule("TRN005", "parallelism-consistency", "Parallelism degrees are consistent", "error", "training",
            parallelism_consistency, waivable=False)
