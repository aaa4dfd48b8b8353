"""TRN001 lossless-fabric: Lossless RoCE training fabric."""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.tables import congestion_control
from validator.check.base import Hit, Rule
from validator.check.context import Context


def lossless_fabric(ctx: Context) -> Iterator[Hit]:
    """An Ethernet training fabric (typed roce or plain ethernet: the RDMA traffic is the same) must be
    lossless: PFC on the RDMA priority, ECN marking, a PFC watchdog, and the same priority and
    DSCP-to-traffic-class mapping on switches and NICs; or run lossy with a named congestion control
    built for loss (validator/data/congestion_control.yaml). InfiniBand is lossless natively
    (credit-based flow control).

    Source: NVIDIA Cumulus Linux RoCE documentation (lossless mode: PFC on priority 3, ECN on TC3,
    CNP on TC6, PFC watchdog); Meta, "RDMA over Ethernet for Distributed AI Training at Meta Scale"
    (SIGCOMM 2024): training traffic needs PFC and congestion control on RoCE.
    Fix: add `fabrics.compute.lossless` with PFC on the RoCE priority, ECN thresholds, pfc_watchdog
    enabled, and NIC settings that match the switch; or set `congestion_control:` to a lossy-safe scheme.
    Example:
        fabrics: {compute: {lossless: {switch: {pfc_watchdog: {enabled: false}}}}}   # PFC storms go unchecked
    """
    fab = ctx.design.fabrics.compute
    if fab is None or fab.type == "infiniband":
        return
    base = ("fabrics", "compute")
    ll = fab.lossless
    schemes = congestion_control()
    if ll is None:
        if fab.congestion_control is None:
            yield Hit(f"{fab.type} training fabric carries RDMA with no lossless settings (PFC, ECN, PFC watchdog) "
                      "and no lossy-safe congestion control", (*base, "type"))
        elif fab.congestion_control not in schemes:
            yield Hit(f"congestion control '{fab.congestion_control}' is not one that makes RDMA safe on a lossy "
                      f"fabric ({', '.join(sorted(schemes))})", (*base, "congestion_control"))
        return
    sw, nic = ll.switch, ll.nic
    roce_prio = nic.roce_priority
    if roce_prio not in sw.pfc_priorities:
        yield Hit(f"PFC is enabled on priorities {sw.pfc_priorities} on switches, but RoCE traffic uses "
                  f"priority {roce_prio}", (*base, "lossless", "switch", "pfc_priorities"))
    if sorted(nic.pfc_priorities) != sorted(sw.pfc_priorities):
        yield Hit(f"NIC PFC priorities {nic.pfc_priorities} differ from switch PFC priorities "
                  f"{sw.pfc_priorities}", (*base, "lossless", "nic", "pfc_priorities"))
    tc = sw.dscp_to_tc.get(str(nic.roce_dscp))
    if tc != sw.roce_tc:
        yield Hit(f"NICs mark RoCE with DSCP {nic.roce_dscp}, which switches map to traffic class {tc}, "
                  f"not the RoCE class {sw.roce_tc}", (*base, "lossless", "switch", "dscp_to_tc"))
    if sw.ecn is None:
        yield Hit("no ECN marking on the RoCE queue: DCQCN cannot slow senders before PFC pauses the link",
                  (*base, "lossless", "switch"))
    elif sw.ecn.min_threshold_kb >= sw.ecn.max_threshold_kb:
        yield Hit(f"ECN min threshold {sw.ecn.min_threshold_kb:g} KB is not below max "
                  f"{sw.ecn.max_threshold_kb:g} KB", (*base, "lossless", "switch", "ecn", "min_threshold_kb"))
    if sw.pfc_watchdog is None or not sw.pfc_watchdog.enabled:
        yield Hit("PFC watchdog is off: a stuck lossless queue (PFC storm) can stall the whole fabric",
                  (*base, "lossless", "switch", *(("pfc_watchdog", "enabled") if sw.pfc_watchdog else ())))
    inband = ctx.design.fabrics.inband
    if inband is not None and inband.lossless is not None:
        yield Hit("the in-band (frontend) network carries a lossless class; PFC there spreads pauses to "
                  "user-facing traffic", ("fabrics", "inband", "lossless"), severity="warning")


RULE = Rule("TRN001", "lossless-fabric", "Lossless RoCE training fabric", "error", "training",
            lossless_fabric, waivable=False)
