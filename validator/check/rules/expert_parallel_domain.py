"""INF006 expert-parallel-domain: Expert parallelism inside the NVLink domain."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import pools


def expert_parallel_domain(ctx: Context) -> Iterator[Hit]:
    """Expert parallelism across more GPUs than the NVLink domain sends its all-to-all over the scale-out
    fabric, which is far slower.

    Source: NVIDIA GB200 NVL72 (72 GPUs in one NVLink domain, 1.8 TB/s per GPU vs 400-800 Gb/s per
    GPU on the scale-out fabric); DeepSeek-V3 technical report (arXiv 2412.19437): expert all-to-all
    kept within a node's NVLink where possible.
    Fix: lower `ep` so the replica fits one NVLink domain, or use servers with a larger domain (NVL72).
    Example:
        inference: {model: deepseek-v3, replica: {gpus: 144, ep: 144}}   # two NVL72 racks
    """
    domain = ctx.resolved.nvlink_domain_gpus
    for path, rep, _ in pools(ctx):
        if rep.ep > 1 and rep.gpus > domain:
            yield Hit(f"EP {rep.ep} over {rep.gpus} GPUs spans more than the {domain}-GPU NVLink domain",
                      (*path, "ep"))


RULE = Rule("INF006", "expert-parallel-domain", "Expert parallelism inside the NVLink domain", "warning", "inference",
            expert_parallel_domain)
