"""Arista EOS: the structured configuration of one switch in the shape of AVD's eos_cli_config_gen
(pyavd's EOS schema), which templates/eos/running-config.j2 formats as EOS CLI and which is also
written beside it (<name>.avd.yml) for teams that deploy with AVD.

Lossless settings go into one QoS profile applied to every fabric interface (`service-profile`):
trust DSCP, PFC no-drop on the design's priorities with the PFC watchdog, ECN marking on the RoCE
queue, the CNP queue in strict priority and the RoCE and default queues sharing the rest by weight.
The PFC watchdog polls at half its detection time (design policy: a storm is acted on within 1.5
times the detection time the design gives).
"""

from __future__ import annotations

from typing import Any

from validator.emit.render.device import DeviceConfig, Qos

PROFILE = "ROCE_LOSSLESS"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


def _qos_profile(qos: Qos) -> dict[str, Any]:
    queues: list[dict[str, Any]] = []
    for tc, mode, weight in qos.schedule:
        queue: dict[str, Any] = {"id": tc, "priority": "priority strict" if mode == "strict" else "no priority"}
        if weight is not None:
            queue["bandwidth_percent"] = weight
        if tc == qos.roce_tc and qos.ecn is not None:
            queue["random_detect"] = {"ecn": {"count": True, "threshold": {
                "units": "kbytes", "min": int(qos.ecn.min_kb), "max": int(qos.ecn.max_kb),
                "max_probability": qos.ecn.probability_pct}}}
        queues.append(queue)
    pfc: dict[str, Any] = {"enabled": True, "priorities": [{"priority": p, "no_drop": True}
                                                           for p in qos.pfc_priorities]}
    if qos.watchdog is not None:
        pfc["watchdog"] = {"enabled": True, "action": qos.watchdog.action}
    return {"name": PROFILE, "trust": "dscp", "tx_queues": queues,
            "priority_flow_control": pfc}


def avd_structured_config(d: DeviceConfig) -> dict[str, Any]:
    """The device as eos_cli_config_gen input (keys in AVD's schema)."""
    out: dict[str, Any] = {
        "hostname": d.name,
        "service_routing_protocols_model": "multi-agent",
        "ip_routing": True,
        "vrfs": [{"name": d.mgmt.vrf, "ip_routing": False}],
        "management_interfaces": [{"name": d.mgmt.interface, "vrf": d.mgmt.vrf, "ip_address": d.mgmt.ip,
                                   "gateway": d.mgmt.gateway, "type": "oob",
                                   **({"description": d.mgmt.description} if d.mgmt.description else {})}],
        "static_routes": [{"vrf": d.mgmt.vrf, "prefix": "0.0.0.0/0", "next_hop": d.mgmt.gateway}],
        "loopback_interfaces": [{"name": "Loopback0", "ip_address": d.loopback}],
        "ethernet_interfaces": [],
        "router_bgp": {"as": str(d.asn), "router_id": d.router_id, "maximum_paths": {"paths": 64},
                       "neighbors": [{"ip_address": i.peer_ip, "remote_as": str(i.peer_asn), "description": i.peer}
                                     for i in d.neighbors],
                       "redistribute": {"connected": {"enabled": True}}},
    }
    qos = d.qos
    if qos is not None:
        out["qos"] = {"map": {"dscp": [f"{' '.join(str(x) for x in qos.dscps(tc))} to traffic-class {tc}"
                                       for tc in sorted({t for _, t in qos.dscp_to_tc})]}}
        out["qos_profiles"] = [_qos_profile(qos)]
        if qos.watchdog is not None:
            wd = qos.watchdog
            out["priority_flow_control"] = {"watchdog": {
                "action": wd.action, "timeout": _seconds(wd.detection_ms),
                "polling_interval": _seconds(d.timers.get("poll_ms") if d.timers else max(1, wd.detection_ms // 2)),
                "recovery_time": _seconds(wd.restoration_ms)}}
    for i in d.interfaces:
        eth: dict[str, Any] = {"name": i.port.eos, "description": i.description, "mtu": i.mtu,
                               "speed": i.port.eos_speed, "switchport": {"enabled": False}, "ip_address": i.ip}
        if qos is not None:
            eth["service_profile"] = PROFILE
        out["ethernet_interfaces"].append(eth)
    return out
