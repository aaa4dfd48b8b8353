"""NET004 nvlink-in-rack: NVLink domain inside one rack."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def nvlink_in_rack(ctx: Context) -> Iterator[Hit]:
    """An NVLink domain sits inside its racks: one rack (NVL72), or the pair of adjacent racks an
    NVL36x2 system declares; NVLink runs on copper, which does not reach further.

    Source: NVIDIA HGX H100 (8 GPUs per NVLink domain) and GB200 NVL72 (72 GPUs on a copper spine in
    one rack); NVIDIA Multi-Node NVLink Systems Tuning Guide (NVL36x2: two adjacent racks).
    Fix: put a whole NVLink domain (e.g. all 18 NVL72 trays) in each rack, or shrink the domain.
    Example:
        compute: {server: gb200-nvl72-tray, servers_per_rack: 12}   # 48 of a 72-GPU domain per rack
    """
    r = ctx.resolved
    per_server = r.server.gpus
    racks = r.nvlink_domain_racks
    per_rack = ctx.design.compute.servers_per_rack * per_server
    domain = r.nvlink_domain_gpus
    span = per_rack * racks
    if domain > per_server and (span < domain or span % domain):
        where = "a rack holds" if racks == 1 else f"its {racks} racks hold"
        yield Hit(f"the NVLink domain of {domain} GPUs does not fit its racks: {where} {span} GPUs",
                  ("compute", "servers_per_rack"))


RULE = Rule("NET004", "nvlink-in-rack", "NVLink domain inside one rack", "error", "all", nvlink_in_rack, waivable=False)
