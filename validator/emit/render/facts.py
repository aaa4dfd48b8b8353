"""Facts for the switch configuration templates, computed once in Python (the pyavd way): templates
only format them. Addressing and ASNs follow validator/data/addressing.yaml: one /31 per link
(RFC 3021) with the lower tier on the even address, /32 loopbacks, eBGP with one ASN per leaf, one per
spine layer and one for the core (RFC 7938)."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from validator.base.resources import load_data
from validator.derive.links import iter_links
from validator.expand.sizing import TierSize
from validator.expand.topology import Topology
from validator.resolve.catalog.entries import Switch

ROUTED_FABRICS = ("compute", "storage", "inband")


def _plan() -> dict[str, Any]:
    return {k: v["value"] for k, v in load_data("addressing.yaml").items()}


@dataclass
class PortFact:
    number: int                    # 1-based logical port of the switch at its speed
    name: str                      # SONiC name (Ethernet<first lane>)
    eos_name: str                  # Ethernet<cage>/<sub>
    nvue_name: str                 # swp<cage> or swp<cage>s<sub>
    lanes: str
    speed_gbps: float
    mtu: int
    description: str
    ip: str                        # this end, with prefix length
    peer_ip: str
    peer: str
    peer_asn: int | None           # set for switch-to-switch links (BGP neighbours)


@dataclass
class SwitchFact:
    fabric: str
    fabric_type: str
    role: str
    name: str
    model: Switch
    asn: int
    loopback: str
    ports: list[PortFact] = field(default_factory=list)
    lossless: Any = None           # the fabric's Lossless settings, or None

    @property
    def router_id(self) -> str:
        return self.loopback.split("/")[0]

    @property
    def neighbors(self) -> list[PortFact]:
        return [p for p in self.ports if p.peer_asn is not None]


def _dotted(n: int) -> str:
    """IPv4 address text of an integer (ipaddress objects are too slow for a million links)."""
    return f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def asn_for(fabric: str, role: str, index: int) -> int:
    plan = _plan()
    base = int(plan["asn_base"][fabric])
    if role == "spine":
        return base + 1
    if role == "core":
        return base + 2
    return base + int(plan["leaf_asn_offset"]) + index


class _PortNamer:
    """Logical port -> front-panel cage, sub-port and lanes, from the tier's port layout."""

    def __init__(self, tier: TierSize) -> None:
        self.layout = tier.layout
        self.lanes = _plan()["lanes_per_cage"]

    def names(self, number: int) -> tuple[str, str, str, str]:
        slot = self.layout.slot(number)
        lanes_per_cage = int(self.lanes.get(slot.form_factor, 4))
        cage, sub, ppc = slot.first_cage, slot.sub, slot.per_cage
        per_port = max(1, lanes_per_cage // ppc)
        first = cage * lanes_per_cage + sub * per_port
        lanes = ",".join(str(first + i) for i in range(per_port))
        nvue = f"swp{cage + 1}" if ppc == 1 else f"swp{cage + 1}s{sub}"
        eos = f"Ethernet{cage + 1}" if ppc == 1 else f"Ethernet{cage + 1}/{sub * per_port + 1}"
        return f"Ethernet{first}", eos, nvue, lanes


def switch_facts(topology: Topology, fabric: str) -> Iterator[SwitchFact]:
    """Every switch of a routed Ethernet fabric with its ports, addresses and BGP neighbours."""
    fab = topology.fabrics[fabric]
    spec = getattr(topology.resolved.design.fabrics, fabric)
    plan = _plan()
    p2p = ipaddress.ip_network(plan["p2p_pool"][fabric])
    loopbacks = ipaddress.ip_network(plan["loopback_pool"][fabric])
    mtu = int((spec.lossless.switch.mtu if spec.lossless and spec.lossless.switch.mtu else None)
              or plan["default_mtu"])
    ports: dict[str, list[tuple[int, str, str, str, int | None]]] = defaultdict(list)
    base = int(p2p.network_address)
    for k, link in enumerate(iter_links(topology, fabric)):
        if k * 2 + 1 >= p2p.num_addresses:
            raise ValueError(f"{fabric}: more links than the /{p2p.prefixlen} point-to-point pool holds")
        a_ip, z_ip = f"{_dotted(base + 2 * k)}/31", f"{_dotted(base + 2 * k + 1)}/31"
        a_switch = link.a_role in ("leaf", "spine", "core")
        z_asn = asn_for(fabric, link.z_role, link.z_index)
        ports[link.z_device].append((link.z_port, z_ip, a_ip, f"{link.a_device}:{link.a_port}",
                                     asn_for(fabric, link.a_role, link.a_index) if a_switch else None))
        if a_switch and isinstance(link.a_port, int):
            ports[link.a_device].append((link.a_port, a_ip, z_ip, f"{link.z_device}:{link.z_port}", z_asn))
    serial = 0
    for tier in fab.tiers:
        namer = _PortNamer(tier)
        for index, name in enumerate(fab.names(tier.role)):
            serial += 1
            fact = SwitchFact(fabric, fab.type, tier.role, name, tier.switch, asn_for(fabric, tier.role, index),
                              f"{loopbacks.network_address + serial}/32", lossless=spec.lossless)
            for number, ip, peer_ip, peer, peer_asn in sorted(ports.get(name, [])):
                speed = tier.down_speed_gbps if number <= tier.down_ports else tier.up_speed_gbps
                sonic, eos, nvue, lanes = namer.names(number)
                fact.ports.append(PortFact(number, sonic, eos, nvue, lanes, speed, mtu, peer, ip, peer_ip, peer,
                                           peer_asn))
            yield fact


@dataclass
class IbFabricFact:
    fabric: str
    switches: int
    tiers: list[dict[str, Any]]
    routing_engine: str
    servers: int


def ib_facts(topology: Topology) -> Iterator[IbFabricFact]:
    for name, fab in topology.fabrics.items():
        if fab.type != "infiniband":
            continue
        engine = "ftree" if len(fab.tiers) > 1 else "minhop"
        yield IbFabricFact(name, fab.switches, [{"role": t.role, "switch": t.switch.id, "count": fab.count(t.role)}
                                                for t in fab.tiers], engine, topology.servers)
