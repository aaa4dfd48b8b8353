"""NET002 link-speed-match: Both ends of a link at the same speed."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def link_speed_match(ctx: Context) -> Iterator[Hit]:
    """Both ends of a link run at the same speed: the server NIC at the fabric's speed (its native speed, a
    published breakout of it, or a slower port speed its manual names: a dual-port ConnectX-7 at 100G on
    a BasePOD's SN4600C in-band), and every switch with ports at that speed.

    Source: IEEE 802.3 / InfiniBand: a link trains to one speed; auto-negotiation down wastes the NIC.
    Fix: set `speed_gbps` to the NIC speed, or pick switches and NICs of the same speed.
    Example:
        fabrics: {compute: {speed_gbps: 200}}   # DGX H100 compute NICs run at 400G
    """
    for name, fab in ctx.resolved.fabrics.items():
        if fab.speed_mismatch:
            yield Hit(f"{name}: server NICs run at {fab.nic_speed_gbps:g}G but the fabric is {fab.spec.speed_gbps:g}G",
                      ("fabrics", name, "speed_gbps"))
        if fab.spec.type == "infiniband" and any(t.switch.technology != "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an InfiniBand fabric with Ethernet switches", ("fabrics", name, "type"))
        if fab.spec.type != "infiniband" and any(t.switch.technology == "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an Ethernet fabric with InfiniBand switches", ("fabrics", name, "type"))


RULE = Rule("NET002", "link-speed-match", "Both ends of a link at the same speed", "error", "all", link_speed_match)
