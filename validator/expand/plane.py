"""The sizes a fabric plane is built to, and the small arithmetic every tier shares: a `Problem` (a rule id,
the design key, the arithmetic), the size of one tier, of one plane, of the fabric."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from validator.base.errors import Path
from validator.base.facts import fact
from validator.expand.ports import PortLayout, layout, ports_at
from validator.read.model import Tier
from validator.resolve.catalog.entries import Switch
from validator.resolve.resolved import ResolvedFabric


@fact
class Problem:
    rule: str        # NET001 ports, NET006 striping, NET007 declared value, TOP001 unbuildable
    path: Path
    message: str
    fatal: bool      # the fabric cannot be built as declared: no link of it is made


@fact
class TierSize:
    role: str
    switch: Switch
    count: int                # switches in this tier, per plane
    down_ports: int           # ports per switch reserved for the tier below
    up_ports: int             # ports per switch to the tier above (0 at the top)
    down_speed_gbps: float
    up_speed_gbps: float
    layout: PortLayout
    path: Path
    taper: float              # the taper the design asks of this tier (down : up bandwidth)
    taper_declared: bool

    @property
    def ratio(self) -> float:
        """Downlink bandwidth over uplink bandwidth of one switch, from its ports (0 at the top)."""
        if not self.up_ports:
            return 0.0
        return self.down_ports * self.down_speed_gbps / (self.up_ports * self.up_speed_gbps)


@fact
class PlaneSize:
    rails: int                # leaf rails of a plane: server ports on it (rail-optimized), 2 (dual-ToR) or 1
    ports_per_rail: int       # links one server brings to one rail
    su_servers: int
    sus: int                  # SUs that hold servers (their leaves are built)
    planned_sus: int
    leaves_per_rail: int      # leaves of one rail in one SU (a rail group)
    servers_per_leaf: int
    server_leaves: int        # sus x rails x leaves_per_rail
    leaves_per_pod: int       # leaves that share a set of spines (every leaf in two tiers)
    spines_per_pod: int       # spines of one pod (two tiers: every spine)
    cores_per_group: int      # three tiers: cores joined by spine j of every pod (0 otherwise)
    tiers: tuple[TierSize, ...]
    endpoint_links: int       # server links on one plane
    extra_links: int          # appliance links on one plane
    partial_from: int = 0     # first leaf with fewer downlinks in use than the fullest (a partial SU, a short leaf)
    partial_ups: tuple[int, ...] = ()   # uplinks of leaves partial_from, partial_from + 1, ... (growth.py)
    pod_spine_ups: tuple[int, ...] = ()   # three tiers: uplinks of the spines of each pod, when some have fewer

    def tier(self, role: str) -> TierSize | None:
        return next((t for t in self.tiers if t.role == role), None)

    def leaf_uplinks(self, leaf: int) -> int:
        """Uplinks of leaf `leaf` (local to its plane): the tier's, or fewer on a leaf with fewer downlinks in use."""
        k = leaf - self.partial_from
        if 0 <= k < len(self.partial_ups):
            return self.partial_ups[k]
        return self.tiers[0].up_ports

    def spine_uplinks(self, spine: int) -> int:
        """Uplinks of spine `spine` (local to its plane) to its core group: the tier's, or fewer in a pod whose
        leaves use fewer (growth.py)."""
        pod = spine // max(1, self.spines_per_pod)
        if pod < len(self.pod_spine_ups):
            return self.pod_spine_ups[pod]
        return self.tiers[1].up_ports

    @property
    def leaves(self) -> int:
        return self.tiers[0].count

    @property
    def pods(self) -> int:
        return math.ceil(self.leaves / self.leaves_per_pod) if self.leaves_per_pod else 1

    def pod_of_leaf(self, leaf: int) -> int:
        return leaf // self.leaves_per_pod if len(self.tiers) == 3 else 0


@dataclass
class FabricSize:
    planes: int
    plane: PlaneSize
    problems: list[Problem] = field(default_factory=list)

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)


class Unbuildable(Exception):
    """The plane cannot be built as declared; its problem says why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def parse_ratio(text: str | None) -> float | None:
    """'7:1' -> 7.0 (down : up bandwidth)."""
    if not text:
        return None
    a, b = (float(x) for x in text.split(":"))
    return a / b if b else None


def smallest_divisor(n: int, at_least: float) -> int | None:
    """The smallest divisor of n that is >= at_least (None when at_least > n)."""
    for d in range(max(1, math.ceil(at_least - 1e-9)), n + 1):
        if n % d == 0:
            return d
    return None


def tier_path(fab: ResolvedFabric, role: str) -> Path:
    return ("fabrics", fab.name, "tiers", role)


def taper_of(fab: ResolvedFabric, tier: Tier) -> tuple[float, bool]:
    own = parse_ratio(tier.oversubscription)
    if own is not None:
        return own, True
    shared = parse_ratio(fab.spec.oversubscription)
    return (shared, True) if shared is not None else (1.0, False)


def layout_or_fail(switch: Switch, down: int, up: int, down_speed: float, up_speed: float, path: Path,
                    role: str) -> PortLayout:
    found = layout(switch, down, up, down_speed, up_speed)
    if found is None:
        raise Unbuildable(Problem("NET001", path, f"{role} {switch.id}: {down} x {down_speed:g}G down + {up} x "
                                   f"{up_speed:g}G up do not fit its cages ({ports_at(switch, down_speed)} ports "
                                   f"at {down_speed:g}G in all)", True))
    return found
