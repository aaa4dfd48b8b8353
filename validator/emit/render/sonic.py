"""SONiC config_db tables of one switch, as plain data for templates/sonic/config_db.json.j2.

Values are strings, as config_db stores them. The lossless set (DSCP/TC/PG/queue maps, PFC, lossless
buffer profiles, WRED with ECN, strict CNP queue, PFC watchdog) is present on RoCE fabrics only.
"""

from __future__ import annotations

from typing import Any

from validator.base.resources import load_data
from validator.emit.render.facts import SwitchFact

MAP = "ROCE"


def _qos() -> dict[str, Any]:
    return {k: v["value"] for k, v in load_data("sonic_qos.yaml").items()}


def sonic_json(fact: SwitchFact, tables: dict[str, Any] | None = None) -> dict[str, str]:
    """Each table as indented JSON text (sorted keys), for the template to lay out."""
    import json

    return {name: json.dumps(rows, indent=2, sort_keys=True, ensure_ascii=False).replace("\n", "\n  ")
            for name, rows in (tables or sonic_tables(fact)).items()}


def sonic_tables(fact: SwitchFact) -> dict[str, Any]:
    names = [p.name for p in fact.ports]
    tables: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": fact.name, "hwsku": fact.model.id, "platform": fact.model.asic, "bgp_asn": str(fact.asn),
            "type": "SpineRouter" if fact.role in ("spine", "core") else "LeafRouter",
            "docker_routing_config_mode": "split", "buffer_model": "traditional"}},
        "PORT": {p.name: {"alias": p.eos_name, "lanes": p.lanes, "speed": str(int(p.speed_gbps * 1000)),
                          "mtu": str(p.mtu), "admin_status": "up", "description": p.description}
                 for p in fact.ports},
        "INTERFACE": {**{n: {} for n in names}, **{f"{p.name}|{p.ip}": {} for p in fact.ports}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{fact.loopback}": {}},
        "BGP_NEIGHBOR": {p.peer_ip.split("/")[0]: {"asn": str(p.peer_asn), "name": p.peer.split(":")[0],
                                                   "local_addr": p.ip.split("/")[0], "admin_status": "up"}
                         for p in fact.neighbors},
    }
    if fact.lossless is not None:
        tables.update(_lossless(fact, names))
    return dict(sorted(tables.items()))


def _lossless(fact: SwitchFact, names: list[str]) -> dict[str, Any]:
    sw = fact.lossless.switch
    q = _qos()
    pfc = ",".join(str(p) for p in sorted(sw.pfc_priorities))
    dscp_map = {str(d): str(sw.dscp_to_tc.get(str(d), 0)) for d in range(64)}
    identity = {str(tc): str(tc) for tc in range(8)}
    out: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP: dscp_map},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: identity},
        "TC_TO_QUEUE_MAP": {MAP: identity},
        "PORT_QOS_MAP": {n: {"dscp_to_tc_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP,
                             "pfc_enable": pfc, "pfcwd_sw_enable": pfc} for n in names},
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic",
                                      "size": str(q["ingress_lossless_pool_bytes"])},
            "egress_lossless_pool": {"type": "egress", "mode": "static", "size": str(q["egress_lossless_pool_bytes"])}},
        "BUFFER_PROFILE": {
            "pg_lossless_profile": {"pool": "ingress_lossless_pool", "size": str(q["pg_xon_bytes"]),
                                    "xon": str(q["pg_xon_bytes"]), "xoff": str(q["pg_headroom_xoff_bytes"]),
                                    "dynamic_th": str(q["dynamic_th"])},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "static_th": str(q["egress_lossless_pool_bytes"])}},
        "BUFFER_PG": {f"{n}|{p}": {"profile": "pg_lossless_profile"} for n in names for p in sorted(sw.pfc_priorities)},
        "BUFFER_QUEUE": {f"{n}|{p}": {"profile": "egress_lossless_profile"} for n in names
                         for p in sorted(sw.pfc_priorities)},
        "SCHEDULER": {"scheduler.dwrr": {"type": "DWRR", "weight": str(q["roce_weight_pct"])},
                      "scheduler.strict": {"type": "STRICT"}},
        "QUEUE": {**{f"{n}|{sw.roce_tc}": {"scheduler": "scheduler.dwrr", "wred_profile": "ROCE_LOSSLESS"}
                     for n in names},
                  **{f"{n}|0": {"scheduler": "scheduler.dwrr"} for n in names},
                  **({f"{n}|{sw.cnp_tc}": {"scheduler": "scheduler.strict"} for n in names}
                     if sw.cnp_tc is not None else {})},
    }
    if sw.ecn is not None:
        out["WRED_PROFILE"] = {"ROCE_LOSSLESS": {
            "ecn": "ecn_all", "wred_green_enable": "true",
            "green_min_threshold": str(int(sw.ecn.min_threshold_kb * 1024)),
            "green_max_threshold": str(int(sw.ecn.max_threshold_kb * 1024)),
            "green_drop_probability": str(int(sw.ecn.probability_pct))}}
    else:
        for key in list(out["QUEUE"]):
            out["QUEUE"][key].pop("wred_profile", None)
    wd = sw.pfc_watchdog
    if wd is not None and wd.enabled:
        detect = str(int(wd.detection_ms or q["pfcwd_detection_ms"]))
        restore = str(int(wd.restoration_ms or q["pfcwd_restoration_ms"]))
        out["PFC_WD"] = {**{n: {"action": "drop", "detection_time": detect, "restoration_time": restore}
                            for n in names},
                         "GLOBAL": {"POLL_INTERVAL": str(q["pfc_watchdog_poll_ms"])}}
    return out
