"""The out-of-band management switches: one layer-2 network, a VLAN per management subnet
(validator/data/addressing.yaml mgmt_vlan): each routed fabric's switch management ports in the VLAN
of the subnet its configurations address them in (mgmt_pool, gateway on the first address), every
other management port (BMCs, storage, appliances) in the hosts VLAN, the OOB switches' own addresses
in the oob VLAN. Leaf access ports carry one VLAN; leaf-spine links are trunks with every VLAN. The
first OOB spine holds the gateways (the first address of each subnet) as SVIs; the network team adds
redundancy (VRR) and the upstream route (configs/NOTES.md)."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from validator.base.tables import values
from validator.derive.links import iter_links
from validator.derive.port_names import cable_id, interface_namer, mgmt_interface
from validator.expand.topology import Topology
from validator.resolve.catalog.entries import Switch

FABRIC = "oob"


@dataclass
class OobPort:
    name: str                   # the interface name in the switch's OS
    speed_gbps: float
    description: str            # far end device:interface and the cable id
    access_vlan: int | None     # None: a trunk with every VLAN


@dataclass
class OobVlan:
    vid: int
    name: str
    subnet: str
    gateway: str


@dataclass
class OobSwitch:
    name: str
    role: str
    model: Switch
    os: str
    vlans: list[OobVlan]
    address: str                # this switch's own address (oob VLAN), with prefix length
    gateway: str
    mgmt_interface: str
    own_vid: int                # the VLAN of the OOB switches' own addresses
    ports: list[OobPort] = field(default_factory=list)
    gateways: list[OobVlan] = field(default_factory=list)   # SVIs this switch holds (the first spine)

    @property
    def vids(self) -> list[int]:
        return [v.vid for v in self.vlans]


def _addressing() -> dict[str, Any]:
    return values("addressing.yaml")


def oob_vlans() -> list[OobVlan]:
    plan = _addressing()
    pools = {**plan["mgmt_pool"], **plan["oob_pool"]}
    out = []
    for name, vid in sorted(plan["mgmt_vlan"].items(), key=lambda kv: int(kv[1])):
        net = ipaddress.ip_network(pools[name])
        out.append(OobVlan(int(vid), f"mgmt-{name}", str(net), str(net.network_address + 1)))
    return out


def _vlan_of(role: str, vlans: dict[str, int]) -> int:
    """The VLAN of a management port by what it belongs to: a routed fabric's switch (role
    `<fabric>/<tier>`) in its fabric's VLAN, anything else in the hosts VLAN."""
    fabric = role.split("/")[0] if "/" in role else ""
    return vlans.get(fabric, vlans["hosts"])


def _natural(name: str) -> tuple[object, ...]:
    """swp2 before swp10."""
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def oob_configs(topology: Topology) -> Iterator[OobSwitch]:
    """Every OOB switch of the topology with its ports, VLANs and addresses."""
    fab = topology.fabrics.get(FABRIC)
    if fab is None or not fab.buildable:
        return
    vlans = oob_vlans()
    by_name = {v.name.removeprefix("mgmt-"): v.vid for v in vlans}
    own = next(v for v in vlans if v.vid == by_name["oob"])
    net = ipaddress.ip_network(own.subnet)
    ports: dict[str, list[OobPort]] = defaultdict(list)
    namers: dict[str, Callable[[int | str], str]] = {}

    def name(role: str, port: int | str) -> str:
        namer = namers.get(role) or namers.setdefault(role, interface_namer(topology, FABRIC, role))
        return namer(port)

    for link in iter_links(topology, FABRIC):
        cable = cable_id(FABRIC, link.a_device, link.a_port)
        a_name, z_name = name(link.a_role, link.a_port), name(link.z_role, link.z_port)
        trunk = link.a_role == "leaf"
        ports[link.z_device].append(OobPort(z_name, link.speed_gbps, f"{link.a_device}:{a_name} cable {cable}",
                                            None if trunk else _vlan_of(link.a_role, by_name)))
        if trunk:
            ports[link.a_device].append(OobPort(a_name, link.speed_gbps, f"{link.z_device}:{z_name} cable {cable}",
                                                None))
    serial = 0
    for tier in fab.tiers:
        for index, switch in enumerate(fab.names(tier.role)):
            serial += 1
            first_spine = tier.role == fab.tiers[-1].role and index == 0    # the top tier's first switch
            address = own.gateway if first_spine else str(net.network_address + 1 + serial)
            device = OobSwitch(switch, tier.role, tier.switch, tier.switch.os, vlans,
                               f"{address}/{net.prefixlen}", own.gateway, mgmt_interface(tier.switch.os), own.vid)
            device.ports = sorted(ports.get(switch, []), key=lambda p: _natural(p.name))
            device.gateways = [v for v in vlans if v.vid != own.vid] if first_spine else []
            yield device


def mgmt_peers(topology: Topology) -> dict[str, str]:
    """Switch name -> the OOB port its management port is cabled to and the cable id, for the
    description of its management interface (the same names as the cabling plan)."""
    fab = topology.fabrics.get(FABRIC)
    if fab is None or not fab.buildable:
        return {}
    out: dict[str, str] = {}
    namers: dict[str, Callable[[int | str], str]] = {}
    for link in iter_links(topology, FABRIC):
        if "/" not in link.a_role:
            continue
        namer = namers.get(link.z_role) or namers.setdefault(link.z_role, interface_namer(topology, FABRIC,
                                                                                           link.z_role))
        cable = cable_id(FABRIC, link.a_device, link.a_port)
        out[link.a_device] = f"{link.z_device}:{namer(link.z_port)} cable {cable}"
    return out
