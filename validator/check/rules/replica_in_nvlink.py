"""INF002 replica-in-nvlink: Replica inside one NVLink domain."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import pools


def replica_in_nvlink(ctx: Context) -> Iterator[Hit]:
    """A replica's tensor-parallel group sits inside one NVLink domain: its all-reduces run every layer
    of every token. Pipeline stages and expert groups may span servers over the compute fabric (the
    pipeline sends one activation per stage boundary; EP beyond NVLink is INF006's business).

    Source: Megatron-LM (tensor parallelism all-reduces every layer, kept inside NVLink); vLLM
    distributed serving docs (tensor parallel within a node, pipeline parallel across nodes).
    Fix: make TP at most the NVLink domain size (8 on HGX, 72 on NVL72) and a divisor of it; use PP
    across servers.
    Example:
        inference: {replica: {gpus: 16, tp: 16}}   # on 8-GPU HGX servers
    """
    domain = ctx.resolved.nvlink_domain_gpus
    for path, rep, _ in pools(ctx):
        if rep.tp > 1 and (rep.tp > domain or domain % rep.tp):
            yield Hit(f"TP {rep.tp} of a replica does not fit in (or divide) the {domain}-GPU NVLink domain",
                      (*path, "tp"))


RULE = Rule("INF002", "replica-in-nvlink", "Replica inside one NVLink domain", "error", "inference", replica_in_nvlink)
