"""One name per switch port, in each OS's own syntax, computed once per tier and read by the cabling
plan, the configurations and every other output that names a port.

A tier's logical port n (1-based, the port number of the link plan) sits in a cage and lane of its
switch (expand/ports.py PortLayout): SONiC names it Ethernet<first lane>, EOS Ethernet<cage>/<lane>
(Ethernet<slot>/<port>/<lane> on a modular chassis), Cumulus Linux swp<cage> or swp<cage>s<sub> on a
split cage. A switch's management port takes its OS's management interface name. A cable's id is
its fabric and its place in the fabric's link order, the same in the plan and in both ends' configs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from validator.base.facts import fact
from validator.base.tables import values
from validator.expand.plane import TierSize
from validator.expand.topology import SWITCH_ROLES, Topology

MGMT_PORT = "mgmt"   # the port name the link plan gives a device's management port


@fact
class Breakout:
    """A cage split into `ports` logical ports: set on the parent before the sub-ports exist."""

    ports: int
    speed_gbps: float
    lanes_per_port: int
    sonic_parent: str
    nvue_parent: str

    @property
    def sonic_mode(self) -> str:
        return f"{self.ports}x{self.speed_gbps:g}G"

    @property
    def nvue_mode(self) -> str:
        return f"{self.ports}x"


@fact
class PortName:
    """How one logical port of a tier is named and clocked (same on every switch of the tier)."""

    number: int                 # 1-based logical port at its speed
    sonic: str                  # Ethernet<first lane>
    lanes: str                  # SONiC lane list
    eos: str                    # Ethernet<cage>/<lane> (Ethernet<slot>/<port>/<lane> on a chassis)
    eos_speed: str              # EOS speed keyword, e.g. 400g-4
    nvue: str                   # swp<cage> or swp<cage>s<sub>
    speed_gbps: float
    lanes_per_port: int
    breakout: Breakout | None   # set on every sub-port of a cage that is split

    def on(self, os: str) -> str:
        """The port's name on `os` (sonic, eos, cumulus; InfiniBand switches keep the port number)."""
        return {"sonic": self.sonic, "eos": self.eos, "cumulus": self.nvue}.get(os, str(self.number))


@cache
def _values(name: str) -> dict[str, Any]:
    return values(name)


def _eos_speed(speed: float, lanes: int) -> str:
    if speed >= 1000:
        return f"{speed / 1000:g}t-{lanes}"
    return f"{speed:g}g" if lanes <= 1 else f"{speed:g}g-{lanes}"


def tier_ports(tier: TierSize) -> dict[int, PortName]:
    """Names, speeds and breakouts of a tier's logical ports (once per tier)."""
    lanes_of = _values("addressing.yaml")["lanes_per_cage"]
    layout = tier.layout
    chassis = _values("switch_os.yaml")["eos_modular"].get(tier.switch.id)
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


_TIER_PORTS: dict[int, tuple[TierSize, dict[int, PortName]]] = {}


def cached_tier_ports(tier: TierSize) -> dict[int, PortName]:
    """tier_ports, once per tier object for the life of the process (every switch of a tier shares it)."""
    found = _TIER_PORTS.get(id(tier))
    if found is None or found[0] is not tier:
        if len(_TIER_PORTS) > 256:
            _TIER_PORTS.clear()
        found = _TIER_PORTS[id(tier)] = (tier, tier_ports(tier))
    return found[1]


def mgmt_interface(os: str) -> str:
    return str(_values("switch_os.yaml")["mgmt_interface"].get(os, "eth0"))


def interface_namer(topology: Topology, fabric: str, role: str) -> Callable[[int | str], str]:
    """port -> interface name at a device of `role` on `fabric`: a switch's port in its OS's syntax,
    a switch's management port (role `<fabric>/<tier>`) as its OS's management interface; any other
    device (servers, storage, appliances) keeps the port as the link plan numbers it."""
    if "/" in role:
        other, tier_role = role.split("/")
        tier = topology.fabrics[other].tier(tier_role)
        name = mgmt_interface(tier.switch.os) if tier is not None else MGMT_PORT
        return lambda port: name
    tier = topology.fabrics[fabric].tier(role) if role in SWITCH_ROLES else None
    if tier is None:
        return str
    names = cached_tier_ports(tier)
    os = tier.switch.os

    def name_of(port: int | str) -> str:
        found = names.get(port) if isinstance(port, int) else None
        if found is not None:
            return found.on(os)
        return mgmt_interface(os) if port == MGMT_PORT else str(port)

    return name_of


def cable_id(fabric: str, a_device: str, a_port: int | str) -> str:
    """The label printed on both ends of a cable: its fabric and its A end (device and port), unique because
    every port is used once, and stable: adding servers or switches renames no existing cable (a sequence
    number would relabel every cable after the first new one)."""
    return f"{fabric}:{a_device}:{a_port}"
