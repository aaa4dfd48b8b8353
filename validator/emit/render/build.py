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
from collections.abc import Iterator
from functools import cache
from typing import Any

from validator.base.tables import values
from validator.derive.links import iter_links
from validator.emit.render.device import (
    Breakout,
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
from validator.expand.sizing import TierSize
from validator.expand.topology import Topology

ROUTED_FABRICS = ("compute", "storage", "inband")
_Ends = tuple[int, str, str, str, int | None]   # port, this ip, peer ip, peer, peer asn


def _values(name: str) -> dict[str, Any]:
    return values(name)


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


def _eos_speed(speed: float, lanes: int) -> str:
    if speed >= 1000:
        return f"{speed / 1000:g}t-{lanes}"
    return f"{speed:g}g" if lanes <= 1 else f"{speed:g}g-{lanes}"


def tier_ports(tier: TierSize, modular: dict[str, Any]) -> dict[int, PortName]:
    """Names, speeds and breakouts of a tier's logical ports (once per tier)."""
    lanes_of = _values("addressing.yaml")["lanes_per_cage"]
    layout = tier.layout
    chassis = modular.get(tier.switch.id)
    out: dict[int, PortName] = {}
    for number in range(1, len(layout.slots) + 1):
        slot = layout.slot(number)
        cage_lanes = int(lanes_of.get(slot.form_factor, 4))
        ppc = slot.per_cage
        per_port = max(1, cage_lanes // ppc)
        first = slot.first_cage * cage_lanes + slot.sub * per_port
        speed = tier.down_speed_gbps if number <= layout.down else tier.up_speed_gbps
        lane = slot.sub * per_port + 1
        if chassis:
            eos = f"Ethernet{int(chassis['first_slot']) + slot.group}/{slot.cage + 1}/{lane}"
        else:
            eos = f"Ethernet{slot.first_cage + 1}/{lane}" if cage_lanes > 1 else f"Ethernet{slot.first_cage + 1}"
        breakout = None
        if ppc > 1:
            breakout = Breakout(ppc, speed, per_port, f"Ethernet{slot.first_cage * cage_lanes}",
                                f"swp{slot.first_cage + 1}")
        nvue = f"swp{slot.first_cage + 1}" if ppc == 1 else f"swp{slot.first_cage + 1}s{slot.sub}"
        out[number] = PortName(number, f"Ethernet{first}", ",".join(str(first + i) for i in range(per_port)),
                               eos, _eos_speed(speed, per_port), nvue, speed, per_port, breakout)
    return out


def _link_ends(topology: Topology, fabric: str) -> dict[str, list[_Ends]]:
    p2p = ipaddress.ip_network(_values("addressing.yaml")["p2p_pool"][fabric])
    ends: dict[str, list[_Ends]] = defaultdict(list)
    base, size = int(p2p.network_address), p2p.num_addresses
    switch_roles = ("leaf", "spine", "core")
    for k, link in enumerate(iter_links(topology, fabric)):
        if k * 2 + 1 >= size:
            raise ValueError(f"{fabric}: more links than the /{p2p.prefixlen} point-to-point pool holds")
        a_ip, z_ip = _dotted(base + 2 * k), _dotted(base + 2 * k + 1)
        a_switch = link.a_role in switch_roles
        ends[link.z_device].append((link.z_port, f"{z_ip}/31", a_ip, f"{link.a_device}:{link.a_port}",
                                    asn_for(fabric, link.a_role, link.a_index) if a_switch else None))
        if a_switch and isinstance(link.a_port, int):
            ends[link.a_device].append((link.a_port, f"{a_ip}/31", z_ip, f"{link.z_device}:{link.z_port}",
                                        asn_for(fabric, link.z_role, link.z_index)))
    return ends


def _interfaces(names: dict[int, PortName], ends: list[_Ends], mtu: int) -> list[Interface]:
    out = []
    opened: set[str] = set()
    for number, ip, peer_ip, peer, peer_asn in sorted(ends):
        port = names[number]
        first = port.breakout is not None and port.breakout.nvue_parent not in opened
        if port.breakout is not None:
            opened.add(port.breakout.nvue_parent)
        out.append(Interface(port, mtu, peer, ip, peer_ip, peer, peer_asn, first))
    return out


def device_configs(topology: Topology, fabric: str) -> Iterator[DeviceConfig]:
    """Every switch of a routed Ethernet fabric with its interfaces, QoS, routing and management."""
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
    ends = _link_ends(topology, fabric)
    serial = 0
    for tier in fab.tiers:
        names = tier_ports(tier, nos["eos_modular"])
        os = tier.switch.os
        buffers: Buffers | None = buffers_for(tier.switch.asic) if qos is not None else None
        platform = platform_for(tier.switch.id)
        for index, name in enumerate(fab.names(tier.role)):
            serial += 1
            mgmt = Mgmt(nos["mgmt_interface"].get(os, "eth0"), nos["mgmt_vrf"].get(os, "mgmt"),
                        f"{mgmt_net.network_address + 1 + serial}/{mgmt_net.prefixlen}", gateway)
            device = DeviceConfig(fabric, fab.type, tier.role, name, index, serial, tier.switch, os,
                                  asn_for(fabric, tier.role, index), f"{loopbacks.network_address + serial}/32",
                                  mgmt, platform, qos, buffers, mtu)
            device.interfaces = _interfaces(names, ends.get(name, []), mtu)
            yield device
