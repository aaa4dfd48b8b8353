"""Build the structured configuration of every switch of a routed fabric (device.py), from the
design, the topology and the link plan. Addressing and ASNs follow validator/data/addressing.yaml:
one /31 per link (RFC 3021) with the lower tier on the even address, /32 loopbacks, eBGP with one
ASN per leaf, one per spine layer and one for the core (RFC 7938).

What is alike is computed once: the QoS of a fabric, and the names, speeds and breakouts of a
tier's ports (every switch of a tier has the same port layout); per device only its links,
addresses and neighbours remain."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from validator.base.tables import values
from validator.derive.links import device_namer, link_tuples
from validator.derive.port_names import cable_id, cached_tier_ports, interface_namer
from validator.derive.switch_os import WatchdogTimers, watchdog_timers
from validator.emit.render.device import (
    Buffers,
    DeviceConfig,
    Ecn,
    Interface,
    Mgmt,
    PortName,
    Qos,
    Watchdog,
)
from validator.emit.render.platforms import buffers_for, platform_for
from validator.expand.topology import Topology

ROUTED_FABRICS = ("compute", "storage", "inband")
_Ends = tuple[int, str, str, str, int | None, str]   # port, this ip, peer ip, peer, peer asn, cable id


def _values(name: str) -> dict[str, Any]:
    return values(name)


_OCTETS = tuple(str(n) for n in range(256))


def _dotted(n: int) -> str:
    """IPv4 address text of an integer (ipaddress objects are too slow for a million links)."""
    return f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


@cache
def _asn_base(fabric: str) -> tuple[int, int]:
    plan = _values("addressing.yaml")
    return int(plan["asn_base"][fabric]), int(plan["leaf_asn_offset"])


def asn_for(fabric: str, role: str, index: int) -> int:
    base, leaf_offset = _asn_base(fabric)
    if role == "spine":
        return base + 1
    if role == "core":
        return base + 2
    return base + leaf_offset + index


def fabric_qos(lossless: Any) -> Qos | None:
    """The design's lossless settings as one shared object (None on a fabric without them)."""
    if lossless is None:
        return None
    sw = lossless.switch
    q = _values("sonic_qos.yaml")
    ecn = Ecn(sw.ecn.min_threshold_kb, sw.ecn.max_threshold_kb, int(sw.ecn.probability_pct)) if sw.ecn else None
    wd = sw.pfc_watchdog
    watchdog = None
    if wd is not None and wd.enabled:
        watchdog = Watchdog(int(wd.detection_ms or q["pfcwd_detection_ms"]),
                            int(wd.restoration_ms or q["pfcwd_restoration_ms"]))
    weight = int(q["roce_weight_pct"])
    return Qos(tuple(sorted(set(sw.pfc_priorities))), tuple(sorted((int(d), tc) for d, tc in sw.dscp_to_tc.items())),
               sw.roce_tc, sw.cnp_tc, ecn, watchdog, weight, 100 - weight)


def link_ends(topology: Topology, fabric: str) -> dict[str, list[_Ends]]:
    """Switch -> (port, address, peer address, peer, peer ASN, cable id) of each of its links."""
    p2p = ipaddress.ip_network(_values("addressing.yaml")["p2p_pool"][fabric])
    ends: dict[str, list[_Ends]] = defaultdict(list)
    base, size = int(p2p.network_address), p2p.num_addresses
    switch_roles = ("leaf", "spine", "core")
    namers: dict[str, Callable[[int | str], str]] = {}
    names: dict[tuple[str, int | str], str] = {}    # a port's name depends on its role and number only
    devices: dict[tuple[str, int], tuple[str, int | None]] = {}    # a switch's name and ASN

    def port_name(role: str, port: int | str) -> str:
        name = names.get((role, port))
        if name is None:
            namer = namers.get(role) or namers.setdefault(role, interface_namer(topology, fabric, role))
            name = names[(role, port)] = namer(port)
        return name

    device_namers: dict[str, Callable[[int], str]] = {}

    def device(role: str, index: int) -> tuple[str, int | None]:
        found = devices.get((role, index))
        if found is None:
            namer = device_namers.get(role) or device_namers.setdefault(role, device_namer(topology, fabric, role))
            found = (namer(index), asn_for(fabric, role, index) if role in switch_roles else None)
            if role in switch_roles:
                devices[(role, index)] = found      # servers are seen a few times each: not kept
        return found

    prefixes: dict[int, str] = {}      # the first three octets of a /24, with its dot
    for k, (a_role, a_idx, a_port, z_role, z_idx, z_port, _speed) in enumerate(link_tuples(topology, fabric)):
        if k * 2 + 1 >= size:
            raise ValueError(f"{fabric}: more links than the /{p2p.prefixlen} point-to-point pool holds")
        n = base + 2 * k               # even: both ends of the /31 are in the same /24
        prefix = prefixes.get(n >> 8)
        if prefix is None:
            prefix = prefixes[n >> 8] = _dotted(n).rpartition(".")[0] + "."
        low = n & 255
        a_ip, z_ip = prefix + _OCTETS[low], prefix + _OCTETS[low + 1]
        a_device, a_asn = devices.get((a_role, a_idx)) or device(a_role, a_idx)
        z_device, z_asn = devices.get((z_role, z_idx)) or device(z_role, z_idx)
        cable = cable_id(fabric, a_device, a_port)
        ends[z_device].append((z_port, z_ip + "/31", a_ip, f"{a_device}:{port_name(a_role, a_port)}", a_asn, cable))
        if a_asn is not None and isinstance(a_port, int):
            ends[a_device].append((a_port, a_ip + "/31", z_ip, f"{z_device}:{port_name(z_role, z_port)}",
                                   asn_for(fabric, z_role, z_idx) if z_asn is None else z_asn, cable))
    return ends


def _interfaces(names: dict[int, PortName], ends: list[_Ends], mtu: int,
                lengths: dict[int, int]) -> list[Interface]:
    out = []
    opened: set[str] = set()
    for number, ip, peer_ip, peer, peer_asn, cable in sorted(ends):
        port = names[number]
        first = port.breakout is not None and port.breakout.nvue_parent not in opened
        if port.breakout is not None:
            opened.add(port.breakout.nvue_parent)
        out.append(Interface(port, mtu, f"{peer} cable {cable}", ip, peer_ip, peer, peer_asn, first,
                             lengths.get(number), cable))
    return out


def _timers(qos: Qos | None, os: str, restoration_set: bool) -> WatchdogTimers | None:
    if qos is None or qos.watchdog is None:
        return None
    return watchdog_timers(os, qos.watchdog.detection_ms, qos.watchdog.restoration_ms, restoration_set)


def device_configs(topology: Topology, fabric: str, lengths: dict[str, dict[int, int]] | None = None,
                   mgmt_peers: dict[str, str] | None = None, part: range | None = None) -> Iterator[DeviceConfig]:
    """Every switch of a routed Ethernet fabric with its interfaces, QoS, routing and management;
    `lengths` (switch -> port -> cable metres, derive/switch_os.py) sizes the lossless headroom. `part`: only the
    switches at these places of the fabric's order (0-based; a fabric rendered by two processes,
    emit/render/workers.py)."""
    fab = topology.fabrics[fabric]
    spec = getattr(topology.resolved.design.fabrics, fabric)
    plan = _values("addressing.yaml")
    nos = _values("switch_os.yaml")
    loopbacks = ipaddress.ip_network(plan["loopback_pool"][fabric])
    mgmt_net = ipaddress.ip_network(plan["mgmt_pool"][fabric])
    gateway = str(mgmt_net.network_address + 1)
    mtu = int((spec.lossless.switch.mtu if spec.lossless and spec.lossless.switch.mtu else None)
              or plan["default_mtu"])
    qos = fabric_qos(spec.lossless)
    ends = link_ends(topology, fabric)
    serial = 0
    for tier in fab.tiers:
        names = cached_tier_ports(tier)
        os = tier.switch.os
        buffers: Buffers | None = buffers_for(tier.switch.asic) if qos is not None else None
        platform = platform_for(tier.switch.id)
        timers = _timers(qos, os, bool(spec.lossless and spec.lossless.switch.pfc_watchdog
                                       and spec.lossless.switch.pfc_watchdog.restoration_ms is not None))
        for index, name in enumerate(fab.names(tier.role)):
            serial += 1
            if part is not None and serial - 1 not in part:
                continue
            mgmt = Mgmt(nos["mgmt_interface"].get(os, "eth0"), nos["mgmt_vrf"].get(os, "mgmt"),
                        f"{mgmt_net.network_address + 1 + serial}/{mgmt_net.prefixlen}", gateway,
                        (mgmt_peers or {}).get(name, ""))
            device = DeviceConfig(fabric, fab.type, tier.role, name, index, serial, tier.switch, os,
                                  asn_for(fabric, tier.role, index), f"{loopbacks.network_address + serial}/32",
                                  mgmt, platform, qos, buffers, mtu)
            device.interfaces = _interfaces(names, ends.get(name, []), mtu, (lengths or {}).get(name, {}))
            device.timers = timers
            yield device
