"""INF006 expert-parallel-domain: Expert parallelism beyond NVLink needs an RDMA fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import rdma_fabric, wide_ep_pools


def expert_parallel_domain(ctx: Context) -> Iterator[Hit]:
    """Expert parallelism across more GPUs than the NVLink domain sends its dispatch and combine
    all-to-all over the compute fabric every MoE layer of every step. Wide EP over RDMA is how
    DeepSeek-V3-class models are served (EP32 to EP144); without an RDMA compute fabric it cannot run
    at speed, and without a compute fabric at all it cannot run.

    Source: DeepSeek-V3 inference system overview (day 6 of DeepSeek's open-source week: EP32 prefill,
    EP144 decode over InfiniBand); DeepEP (RDMA low-latency all-to-all kernels); DeepSeek-V3 technical
    report (arXiv 2412.19437): expert all-to-all kept within a node's NVLink where possible.
    Fix: give the fleet an RDMA compute fabric (InfiniBand, RoCE, or Ethernet with a congestion control),
    or keep EP within the NVLink domain (lower `ep`, or servers with a larger domain such as NVL72).
    Example:
        inference: {model: deepseek-v3, replica: {gpus: 144, ep: 144}}   # on a plain Ethernet fabric
    """
    domain = ctx.resolved.nvlink_domain_gpus
    has_fabric = ctx.design.fabrics.compute is not None
    rdma = rdma_fabric(ctx)
    for path, rep, _ in wide_ep_pools(ctx):
        if not has_fabric:
            yield Hit(f"EP {rep.ep} spans more than the {domain}-GPU NVLink domain and the design has no compute "
                      "fabric for the expert all-to-all", (*path, "ep"), severity="error")
        elif not rdma:
            yield Hit(f"EP {rep.ep} spans more than the {domain}-GPU NVLink domain over a compute fabric without "
                      "RDMA (no RoCE, InfiniBand or congestion control)", (*path, "ep"))


RULE = Rule("INF006", "expert-parallel-domain", "Expert parallelism beyond NVLink needs an RDMA fabric", "warning",
            "inference", expert_parallel_domain)
