"""INF005 over-built-fabric: Inference fleet on a lossless InfiniBand fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import wide_ep_pools


def over_built_fabric(ctx: Context) -> Iterator[Hit]:
    """Independent replicas do not all-reduce with each other: a lossless InfiniBand fabric for them is
    money that belongs in HBM. RoCE hardware and operations cost about 1/3 to 1/2 of InfiniBand. Not
    over-built when the fabric carries the fleet's own traffic: expert all-to-all of an expert-parallel
    group wider than the NVLink domain, or the prefill-to-decode KV transfer of a disaggregated fleet.

    Source: Meta, "RDMA over Ethernet for Distributed AI Training at Meta Scale" (SIGCOMM 2024) and the
    Llama 3 paper: RoCE and InfiniBand both carry training; independent inference replicas exchange
    no collectives. Exceptions: wide expert parallelism over RDMA (DeepEP) and the KV transfer of
    prefill/decode disaggregation (DistServe, Mooncake).
    Fix: use an Ethernet (RoCE) compute fabric for the fleet.
    Example:
        fabrics: {compute: {type: infiniband, tiers: {leaf: {switch: qm9700}}}}   # for an inference fleet
    """
    fab = ctx.design.fabrics.compute
    d = ctx.inference.disaggregation
    carries = bool(wide_ep_pools(ctx)) or (d is not None and d.kv_transfer_fabric == "compute" and
                                           d.kv_transfer == "rdma")
    if fab is not None and fab.type == "infiniband" and not carries:
        switches = ctx.topology.fabrics["compute"].switches
        noun = "switch" if switches == 1 else "switches"
        yield Hit(f"independent replicas on a lossless InfiniBand fabric ({switches} {noun}); an Ethernet "
                  "design costs about 1/3 to 1/2 as much", ("fabrics", "compute", "type"))


RULE = Rule("INF005", "over-built-fabric", "Inference fleet on a lossless InfiniBand fabric", "info", "inference",
            over_built_fabric)
