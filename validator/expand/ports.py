"""Where a switch's logical ports sit: which cage of which port group, at which speed.

A switch is a set of port groups (cages of one form factor); a cage gives `ports_per_cage[speed]`
logical ports at a speed (a twin-port OSFP cage: two 400G ports; broken out: four 200G). A tier
uses `down` ports at one speed and `up` ports at another. The layout puts uplinks first into cages
that cannot carry the downlink speed (the 100G uplink cages of a 1G management switch), then the
downlinks, then the remaining uplinks into the next free cages: downlinks and uplinks never share
a cage. Logical port n (1-based) is downlink n for n <= down, uplink n - down after that.

`fits` is the one capacity test every tier passes through; nothing else decides whether ports exist.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.resolve.catalog.entries import Switch


@fact
class PortSlot:
    group: int          # index of the port group
    cage: int           # 0-based cage within the group
    sub: int            # 0-based logical port within the cage
    per_cage: int       # logical ports the cage gives at this speed
    form_factor: str    # the cage: OSFP, QSFP-DD, QSFP112, ...
    first_cage: int     # 0-based cage number counted over all groups (front-panel order)


@fact
class PortLayout:
    """The ports of one switch model as a tier uses them (same for every switch of the tier)."""

    switch: Switch
    down: int
    up: int
    down_speed: float
    up_speed: float
    slots: tuple[PortSlot, ...]     # slot of logical port n at index n - 1

    def slot(self, port: int) -> PortSlot:
        return self.slots[port - 1]

    @property
    def cages_used(self) -> int:
        return len({(s.group, s.cage) for s in self.slots})


def per_cage(switch: Switch, group: int, speed: float) -> int:
    return switch.port_groups[group].ports_per_cage.get(int(speed), 0)


def ports_at(switch: Switch, speed: float) -> int:
    """Logical ports the whole switch offers at one speed (every cage split to it)."""
    return switch.ports_at(speed)


def layout(switch: Switch, down: int, up: int, down_speed: float, up_speed: float) -> PortLayout | None:
    """The port layout of `down` downlinks and `up` uplinks, or None when the cages cannot hold them."""
    down_slots: list[PortSlot] = []
    up_slots: list[PortSlot] = []
    if not _place(switch, down, up, down_speed, up_speed, down_slots, up_slots):
        return None
    return PortLayout(switch, down, up, down_speed, up_speed, tuple(down_slots + up_slots))


def fits(switch: Switch, down: int, up: int, down_speed: float, up_speed: float) -> bool:
    """Whether the cages hold `down` downlinks and `up` uplinks (as `layout`, without building the slots:
    the sizing asks this many times)."""
    return _place(switch, down, up, down_speed, up_speed, None, None)


def _place(switch: Switch, down: int, up: int, down_speed: float, up_speed: float,
           down_slots: list[PortSlot] | None, up_slots: list[PortSlot] | None) -> bool:
    """Fill the cages: uplinks first into cages only they can use, then downlinks, then the other
    uplinks. The slots go into the lists when given. True when every link found a port."""
    groups = switch.port_groups
    free = [g.cages for g in groups]
    offsets = [sum(g.cages for g in groups[:i]) for i in range(len(groups))]

    def take(count: int, speed: float, order: list[int], out: list[PortSlot] | None) -> int:
        for gi in order:
            ppc = per_cage(switch, gi, speed)
            if not ppc:
                continue
            cages = min(free[gi], -(-count // ppc))
            if out is not None:
                for k in range(cages):
                    cage = groups[gi].cages - free[gi] + k
                    out += [PortSlot(gi, cage, sub, ppc, groups[gi].form_factor, offsets[gi] + cage)
                            for sub in range(min(ppc, count - k * ppc))]
            free[gi] -= cages
            count = max(0, count - cages * ppc)
        return count

    indices = list(range(len(groups)))
    only_up = [i for i in indices if per_cage(switch, i, up_speed) and not per_cage(switch, i, down_speed)]
    rest = [i for i in indices if i not in only_up]
    left_up = take(up, up_speed, only_up, up_slots)
    left_down = take(down, down_speed, rest, down_slots)
    left_up = take(left_up, up_speed, rest, up_slots)
    return not (left_up or left_down)


def uplinks_for(down: int, down_speed: float, up_speed: float, taper: float) -> int:
    """Uplinks that carry `down` downlinks' bandwidth divided by the taper (down : up)."""
    return math.ceil(down * down_speed / (taper * up_speed) - 1e-9) if down else 0


def dedicated_uplinks(switch: Switch, down_speed: float) -> tuple[int, float] | None:
    """(ports, speed) of cages that cannot carry the downlink speed: a management switch's uplink cages."""
    for i, g in enumerate(switch.port_groups):
        if not per_cage(switch, i, down_speed) and g.ports_per_cage:
            speed = float(max(g.ports_per_cage))
            return sum(x.cages * x.ports_per_cage.get(int(speed), 0) for x in switch.port_groups
                       if not x.ports_per_cage.get(int(down_speed))), speed
    return None


def most_downlinks(switch: Switch, down_speed: float, up_speed: float, taper: float, has_upper: bool) -> int:
    """The most downlinks a switch can take when its uplinks must carry them at the taper."""
    total = ports_at(switch, down_speed)
    if not has_upper:
        return total
    lo, hi = 0, total
    while lo < hi:   # fits() is monotone in the downlink count
        mid = (lo + hi + 1) // 2
        if fits(switch, mid, uplinks_for(mid, down_speed, up_speed, taper), down_speed, up_speed):
            lo = mid
        else:
            hi = mid - 1
    return lo
