"""INF005 over-built-fabric: Inference fleet on a lossless InfiniBand fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def over_built_fabric(ctx: Context) -> Iterator[Hit]:
    """Independent replicas do not all-reduce with each other: a lossless InfiniBand fabric for them is
    money that belongs in HBM. RoCE hardware and operations cost about 1/3 to 1/2 of InfiniBand.

    Source: Meta, "RDMA over Ethernet for Distributed AI Training at Meta Scale" (SIGCOMM 2024) and the
    Llama 3 paper: RoCE and InfiniBand both carry training; independent inference replicas exchange
    no collectives. Exception: MoE replicas with EP across an NVL72-class domain.
    Fix: use an Ethernet (RoCE) compute fabric for the fleet.
    Example:
        kind: InferenceFleet
        fabrics: {compute: {type: infiniband, ...}}
    """
    fab = ctx.design.fabrics.compute
    if fab is not None and fab.type == "infiniband":
        switches = ctx.topology.fabrics["compute"].switches
        noun = "switch" if switches == 1 else "switches"
        yield Hit(f"independent replicas on a lossless InfiniBand fabric ({switches} {noun}); an Ethernet "
                  "design costs about 1/3 to 1/2 as much", ("fabrics", "compute", "type"))


RULE = Rule("INF005", "over-built-fabric", "Inference fleet on a lossless InfiniBand fabric", "info", "inference",
            over_built_fabric)
