"""TRN010 expert-parallel-fabric: Expert parallelism beyond the NVLink domain needs a fabric that carries it."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def expert_parallel_fabric(ctx: Context) -> Iterator[Hit]:
    """When an expert-parallel group (TP x CP x EP consecutive ranks) spans more than one NVLink domain,
    every MoE layer sends its tokens' dispatch and combine all-to-alls over the compute fabric. That
    fabric must be RDMA (InfiniBand or RoCE), and the layer's all-to-all (forward and backward) must not
    take much longer than its compute: up to about 1.5x, overlapping it with another micro-batch's
    compute (DualPipe) can hide it; beyond that every step waits for the fabric.

    Source: DeepSeek-V3 report (arXiv 2412.19437) section 3.2: EP64 across 8 nodes over 400 Gb/s
    InfiniBand with DualPipe overlap and node-limited routing (about 1.3x by this estimate); the
    all-to-all volume of dispatch and combine as in Megatron-LM's MoE token dispatcher (top-k copies of
    each token's hidden state, forward and backward).
    Fix: keep EP inside the NVLink domain (lower `ep`, or a larger-domain server), or give the compute
    fabric more bandwidth per GPU.
    Example:
        compute: {server: dgx-b200}
        training: {model: deepseek-v3, parallelism: {ep: 64}}   # 2.6x over 400 Gb/s per GPU
    """
    t = ctx.training
    p = t.parallelism
    model = ctx.resolved.model
    domain = ctx.resolved.nvlink_domain_gpus
    span = p.tp * p.cp * p.ep
    if model.moe is None or p.ep <= 1 or span <= domain:
        return
    path = ("training", "parallelism", "ep")
    fab = ctx.resolved.fabrics.get("compute")
    if fab is None or fab.spec.type == "ethernet":
        yield Hit(f"EP {p.ep} spans {span} GPUs, beyond the {domain}-GPU NVLink domain, but the compute fabric "
                  "has no RDMA for the all-to-all", path)
        return
    report = ctx.training_report
    ratio = report.estimate.ep_alltoall_ratio
    limit = ctx.threshold("ep_alltoall_compute_ratio_max")
    if ratio > limit:
        yield Hit(f"EP {p.ep} spans {span} GPUs beyond the {domain}-GPU NVLink domain: each MoE layer's "
                  f"all-to-all takes {ratio:.1f}x its compute over {report.setup.fabric.gbps_per_gpu:g} Gb/s per "
                  f"GPU, more than the {limit:g}x overlap can hide", path)


RULE = Rule("TRN010", "expert-parallel-fabric", "Expert parallelism beyond the NVLink domain needs a fabric "
            "that carries it", "warning", "training", expert_parallel_fabric,
            thresholds=("ep_alltoall_compute_ratio_max",))
