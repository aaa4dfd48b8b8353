"""Calculations several rules share, one home each: the heaviest GPU rack's power, the serving pools of an
inference fleet, the engine's memory utilisation and whether experts or the KV cache need RDMA."""

from __future__ import annotations

from validator.check.context import Context
from validator.read.inference import Replica


def rack_kw(ctx: Context) -> float | None:
    """kW of the heaviest GPU rack as the rack power counts it (servers, top-of-rack switches, optics, cable
    ends; validator.derive.rack_power); None when the server's power is unknown. With some other part of
    unknown power it is the known part, a lower bound: a limit it exceeds is exceeded."""
    if ctx.resolved.server.max_power_w is None:
        return None
    heaviest = ctx.derived.rack_power.heaviest("gpu")
    return None if heaviest is None else heaviest.known_w / 1000


def pools(ctx: Context) -> list[tuple[tuple[str | int, ...], Replica, int]]:
    inf = ctx.inference
    if inf.disaggregation:
        d = inf.disaggregation
        return [(("inference", "disaggregation", "prefill", "replica"), d.prefill.replica, d.prefill.replicas),
                (("inference", "disaggregation", "decode", "replica"), d.decode.replica, d.decode.replicas)]
    return [(("inference", "replica"), inf.replica, inf.planned_replicas)]


def rdma_fabric(ctx: Context, name: str = "compute") -> bool:
    """The fabric exists and carries RDMA: InfiniBand, RoCE, or Ethernet with a congestion control."""
    fab = ctx.design.fabrics.compute if name == "compute" else getattr(ctx.design.fabrics, name)
    return fab is not None and (fab.type in ("infiniband", "roce") or fab.congestion_control is not None)


def wide_ep_pools(ctx: Context) -> list[tuple[tuple[str | int, ...], Replica, int]]:
    """Pools whose expert-parallel group is larger than the NVLink domain (all-to-all over the fabric)."""
    domain = ctx.resolved.nvlink_domain_gpus
    return [p for p in pools(ctx) if p[1].ep > 1 and p[1].ep > domain]
