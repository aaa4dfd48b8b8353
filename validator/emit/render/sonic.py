"""SONiC config_db tables of one switch, as plain data for templates/sonic/config_db.json.j2.

Values are strings, as config_db stores them. FRR's BGP is generated from these tables only in
the `separated` (or `unified`) routing config mode (sonic-device_metadata.yang,
docker_routing_config_mode); `split` would ignore them. The lossless set (DSCP/TC/PG/queue maps,
PFC, buffer pools and profiles of the ASIC, WRED with ECN, strict CNP queue, PFC watchdog) is
present on fabrics with lossless settings only.
"""

from __future__ import annotations

from typing import Any

from validator.base.tables import value
from validator.derive.switch_os import lossless_headroom
from validator.emit.escape import to_json
from validator.emit.render.device import Buffers, DeviceConfig, Qos

MAP = "ROCE"
PLACEHOLDER = "SET-FROM-VENDOR"   # platform/HWSKU not published for this switch (see configs/NOTES.md)


def sonic_json(tables: dict[str, Any]) -> dict[str, str]:
    """Each table as indented JSON text (sorted keys), for the template to lay out."""
    return {name: to_json(rows).replace("\n", "\n  ")
            for name, rows in tables.items()}


def sonic_tables(d: DeviceConfig) -> dict[str, Any]:
    names = [i.port.sonic for i in d.interfaces]
    meta = {"hostname": d.name, "hwsku": d.platform.sonic_hwsku or PLACEHOLDER,
            "platform": d.platform.sonic_platform or PLACEHOLDER, "mac": d.placeholder_mac,
            "bgp_asn": str(d.asn), "type": "SpineRouter" if d.role in ("spine", "core") else "LeafRouter",
            "docker_routing_config_mode": "separated"}
    if d.buffers is not None:
        meta["buffer_model"] = d.buffers.model
    tables: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": meta},
        "PORT": {i.port.sonic: {"alias": i.port.eos, "lanes": i.port.lanes,
                                "speed": str(int(i.port.speed_gbps * 1000)), "mtu": str(i.mtu),
                                "admin_status": "up", "description": i.description} for i in d.interfaces},
        "INTERFACE": {**{n: {} for n in names}, **{f"{i.port.sonic}|{i.ip}": {} for i in d.interfaces}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{d.loopback}": {}},
        "BGP_NEIGHBOR": {i.peer_ip: {"asn": str(i.peer_asn), "name": i.peer.split(":")[0],
                                     "local_addr": i.ip.split("/")[0], "admin_status": "up"} for i in d.neighbors},
        "MGMT_PORT": {d.mgmt.interface: {"alias": d.mgmt.interface, "admin_status": "up",
                                          **({"description": d.mgmt.description} if d.mgmt.description else {})}},
        "MGMT_INTERFACE": {f"{d.mgmt.interface}|{d.mgmt.ip}": {"gwaddr": d.mgmt.gateway}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
    }
    if d.breakouts:
        tables["BREAKOUT_CFG"] = {b.sonic_parent: {"brkout_mode": b.sonic_mode} for b in d.breakouts}
    if d.qos is not None:
        tables.update(_lossless(d, d.qos, names))
    return dict(sorted(tables.items()))


def _lossless(d: DeviceConfig, qos: Qos, names: list[str]) -> dict[str, Any]:
    pfc = ",".join(str(p) for p in qos.pfc_priorities)
    dscp = dict(qos.dscp_to_tc)
    identity = {str(tc): str(tc) for tc in range(8)}
    queues: dict[str, Any] = {}
    for n in names:
        for tc, mode, _weight in qos.schedule:
            queue = {"scheduler": f"scheduler.{mode}{tc}"}
            if tc == qos.roce_tc and qos.ecn is not None:
                queue["wred_profile"] = "ROCE_LOSSLESS"
            queues[f"{n}|{tc}"] = queue
    schedulers = {f"scheduler.{mode}{tc}": {"type": mode.upper(), **({"weight": str(w)} if w is not None else {})}
                  for tc, mode, w in qos.schedule}
    out: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP: {str(v): str(dscp.get(v, 0)) for v in range(64)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: identity},
        "TC_TO_QUEUE_MAP": {MAP: identity},
        "PORT_QOS_MAP": {n: {"dscp_to_tc_map": MAP, "tc_to_pg_map": MAP, "tc_to_queue_map": MAP, "pfc_enable": pfc,
                             **({"pfcwd_sw_enable": pfc} if qos.watchdog else {})} for n in names},
        "SCHEDULER": schedulers,
        "QUEUE": queues,
    }
    if d.buffers is not None:
        out.update(_buffers(d, d.buffers, qos))
    if qos.ecn is not None:
        out["WRED_PROFILE"] = {"ROCE_LOSSLESS": {
            "ecn": "ecn_all", "wred_green_enable": "true", "green_min_threshold": str(qos.ecn.min_bytes),
            "green_max_threshold": str(qos.ecn.max_bytes), "green_drop_probability": str(qos.ecn.probability_pct)}}
    if qos.watchdog is not None:
        poll = d.timers.get("poll_ms") if d.timers is not None else value("sonic_qos.yaml", "pfc_watchdog_poll_ms")
        wd = qos.watchdog
        out["PFC_WD"] = {**{n: {"action": wd.action, "detection_time": str(wd.detection_ms),
                                "restoration_time": str(wd.restoration_ms)} for n in names},
                         "GLOBAL": {"POLL_INTERVAL": str(poll)}}
    return out


def _buffers(d: DeviceConfig, b: Buffers, qos: Qos) -> dict[str, Any]:
    pools: dict[str, Any] = {
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic",
                                  **{k: str(v) for k, v in b.pools.get("ingress_lossless_pool", {}).items()}},
        "egress_lossless_pool": {"type": "egress", "mode": "dynamic",
                                 **{k: str(v) for k, v in b.pools.get("egress_lossless_pool", {}).items()}}}
    profiles: dict[str, Any] = {}
    for name, fields in b.profiles.items():
        pool = "ingress_lossless_pool" if name.startswith("ingress") else "egress_lossless_pool"
        profiles[name] = {"pool": pool, "size": "0", **{k: str(v) for k, v in fields.items()}}
    pgs: dict[str, Any] = {}
    for i in d.interfaces:
        speed = int(i.port.speed_gbps * 1000)
        profile = "NULL"                       # dynamic model: headroom from speed, cable and MTU
        if b.model == "traditional":
            row = lossless_headroom(d.os, b.asic, speed).row_mbps
            pg = b.pg_lossless.get(row) if row is not None else None
            if pg is None:
                continue                       # no published headroom (NET012 refuses such a design)
            profile = f"pg_lossless_{row}_profile"
            profiles[profile] = {"pool": "ingress_lossless_pool", **{k: str(v) for k, v in pg.items()}}
        for p in qos.pfc_priorities:
            pgs[f"{i.port.sonic}|{p}"] = {"profile": profile}
    out: dict[str, Any] = {"BUFFER_POOL": pools, "BUFFER_PROFILE": profiles}
    cables = {i.port.sonic: f"{i.cable_m}m" for i in d.interfaces if i.cable_m is not None}
    if cables:
        out["CABLE_LENGTH"] = {"AZURE": cables}   # the name SONiC's buffer manager reads
    if pgs:
        out["BUFFER_PG"] = pgs
    if "egress_lossless_profile" in profiles:
        out["BUFFER_QUEUE"] = {f"{i.port.sonic}|{p}": {"profile": "egress_lossless_profile"}
                               for i in d.interfaces for p in qos.pfc_priorities}
    return out
