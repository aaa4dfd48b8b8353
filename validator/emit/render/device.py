"""The structured configuration of one switch, computed once in Python (the pyavd way): every OS
template only formats it. Parts shared by a whole fabric (QoS) or a whole tier (port names, speeds,
breakouts) are built once and shared by every device of that class."""

from __future__ import annotations

from dataclasses import dataclass, field

from validator.base.facts import fact
from validator.derive.port_names import Breakout, PortName
from validator.derive.switch_os import WatchdogTimers

__all__ = ["Breakout", "Buffers", "DeviceConfig", "Ecn", "Interface", "Mgmt", "Platform", "PortName", "Qos",
           "Watchdog"]
from validator.resolve.catalog.entries import Switch


@fact
class Ecn:
    min_kb: float
    max_kb: float
    probability_pct: int

    @property
    def min_bytes(self) -> int:
        return int(self.min_kb * 1024)

    @property
    def max_bytes(self) -> int:
        return int(self.max_kb * 1024)


@fact
class Watchdog:
    detection_ms: int
    restoration_ms: int
    action: str = "drop"


@fact
class Buffers:
    """Lossless buffer settings of one ASIC (validator/data/sonic_buffers.yaml)."""

    asic: str
    model: str                                 # traditional | dynamic
    pools: dict[str, dict[str, int]]           # SONiC pool name -> fields (unknown sizes left out)
    profiles: dict[str, dict[str, int]]        # static profiles besides the lossless PG profile
    pg_lossless: dict[int, dict[str, int]]     # port speed (Mb/s) -> PG profile fields
    source: str


@fact
class Qos:
    """A fabric's lossless settings as the design states them (one object per fabric)."""

    pfc_priorities: tuple[int, ...]
    dscp_to_tc: tuple[tuple[int, int], ...]    # sorted (dscp, traffic class)
    roce_tc: int
    cnp_tc: int | None
    ecn: Ecn | None
    watchdog: Watchdog | None
    roce_weight_pct: int
    default_weight_pct: int

    def dscps(self, tc: int | None) -> list[int]:
        return [d for d, t in self.dscp_to_tc if tc is not None and t == tc]

    @property
    def schedule(self) -> list[tuple[int, str, int | None]]:
        """(traffic class, dwrr | strict, weight %) per scheduled queue: the CNP queue strict, the
        RoCE and default queues sharing the rest by weight (one queue if RoCE rides class 0)."""
        out: dict[int, tuple[str, int | None]] = {0: ("dwrr", self.default_weight_pct)}
        out[self.roce_tc] = ("dwrr", self.roce_weight_pct if self.roce_tc else 100)
        if self.cnp_tc is not None and self.cnp_tc != self.roce_tc:
            out[self.cnp_tc] = ("strict", None)
        return [(tc, mode, weight) for tc, (mode, weight) in sorted(out.items())]

    @property
    def traffic_classes(self) -> list[int]:
        return sorted({t for _, t in self.dscp_to_tc} | {self.roce_tc, 0} | set(self.pfc_priorities))


@dataclass(slots=True)
class Interface:
    port: PortName
    mtu: int
    description: str
    ip: str                     # this end, with prefix length
    peer_ip: str                # the far end, no prefix length
    peer: str                   # device:interface (the peer's own name for the port)
    peer_asn: int | None        # set on switch-to-switch links (BGP neighbours)
    opens_cage: bool = False    # the first used sub-port of a split cage: the breakout goes before it
    cable_m: int | None = None  # length class of the cable on this port (lossless headroom is sized for it)
    cable: str = ""             # the cable's id, as printed on both its ends and in the cabling plan


@fact
class Mgmt:
    interface: str
    vrf: str
    ip: str
    gateway: str
    description: str = ""       # the OOB switch port it is cabled to and the cable id


@dataclass
class Platform:
    """The NOS's name for the hardware: SONiC platform and HWSKU (None when none is published)."""

    sonic_platform: str | None
    sonic_hwsku: str | None
    source: str


@dataclass
class DeviceConfig:
    fabric: str
    fabric_type: str
    role: str
    name: str
    index: int                  # over every plane of the role
    serial: int                 # 1-based over every switch of the fabric
    model: Switch
    os: str
    asn: int
    loopback: str
    mgmt: Mgmt
    platform: Platform
    qos: Qos | None
    buffers: Buffers | None
    mtu: int
    interfaces: list[Interface] = field(default_factory=list)
    timers: WatchdogTimers | None = None     # the PFC watchdog as this OS sets it (derive/switch_os.py)

    @property
    def cable_lengths(self) -> list[int]:
        """The distinct cable lengths of this switch's ports, shortest first (one PFC profile each)."""
        return sorted({i.cable_m for i in self.interfaces if i.cable_m is not None})

    @property
    def port_rows(self) -> list[tuple[str, tuple[str, str, int] | None, str, int, int, str, int | None]]:
        """(NVUE name, the split cage this port opens as (NVUE parent, mode, lanes per port) or None,
        description, speed in Gb/s as an integer, mtu, ip, cable_m) of every interface: what a template prints
        per port, one tuple of plain values to unpack instead of attribute look-ups and filters (800,000 ports
        in a 100k-GPU render)."""
        return [(i.port.nvue, _cage(i.port.breakout) if i.opens_cage else None, i.description,
                 int(i.port.speed_gbps), i.mtu, i.ip, i.cable_m) for i in self.interfaces]

    @property
    def neighbor_rows(self) -> list[tuple[str, int | None, str]]:
        """(peer ip, peer ASN, peer) of every BGP neighbour, as plain values (see `port_rows`)."""
        return [(i.peer_ip, i.peer_asn, i.peer) for i in self.neighbors]

    @property
    def router_id(self) -> str:
        return self.loopback.split("/")[0]

    @property
    def neighbors(self) -> list[Interface]:
        return [i for i in self.interfaces if i.peer_asn is not None]

    @property
    def breakouts(self) -> list[Breakout]:
        """The split cages this device uses, in port order (each once)."""
        return [i.port.breakout for i in self.interfaces if i.opens_cage and i.port.breakout is not None]

    @property
    def placeholder_mac(self) -> str:
        """A locally administered MAC built from the device serial: a placeholder, never a real address."""
        s = self.serial
        return f"02:00:00:{(s >> 16) & 255:02x}:{(s >> 8) & 255:02x}:{s & 255:02x}"


def _cage(b: Breakout | None) -> tuple[str, str, int] | None:
    return None if b is None else (b.nvue_parent, b.nvue_mode, b.lanes_per_port)
