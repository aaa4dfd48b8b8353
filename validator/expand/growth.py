"""Sizing from what is built, and growth as an explicit choice.

Without `growth:` a fabric is built for the servers and appliances it has: a leaf's uplinks carry the
downlinks in use on the fullest leaf (not every port it could take), and spines and cores are sized to the
leaves that exist. The uplink count is the smallest count at or above what the used downlinks need that
gives the fewest spines with even striping (31 used downlinks at 1:1 take 32 uplinks over 4 spines rather
than 31 over 31 spines): a leaf never has more uplinks than that.

`growth: {scalable_units: N}` (or the older `planned_scalable_units: N`) builds for N full scalable units:
every leaf gets the uplinks of all its downlink ports and the spines and cores the ports of N SUs' leaves.
The difference is priced as its own BOM line (validator/derive/growth.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from validator.base.tables import thresholds as threshold_table
from validator.expand.plane import smallest_divisor
from validator.expand.ports import uplinks_for
from validator.read.model import Fabric


def growth_sus(spec: Fabric) -> int | None:
    """The SU count the design builds for, or None when it builds for what it has."""
    if spec.growth is not None:
        return spec.growth.scalable_units
    return spec.planned_scalable_units


def used_downlinks(capacity: int, first_leaf_servers: int, ports_per_rail: int, extra: int) -> int:
    """Downlinks in use on the fullest leaf: the first leaf's servers, then appliances fill it (they take free
    ports lowest leaf first, validator/derive/links.py), never more than its capacity."""
    return min(capacity, first_leaf_servers * ports_per_rail + extra)


def spine_floor(thresholds: Mapping[str, float], fabric: str, kind: str) -> int:
    """The fewest spines the compute fabric of a training cluster is sized to when its leaves have the uplinks
    for them: TRN009's `min_spines` (validator/data/thresholds.yaml, DGX SuperPOD RA: 4 spines at 1 SU), so a
    fabric sized from what is built is not one the rules then warn about. Other fabrics: no floor."""
    if fabric != "compute" or kind != "TrainingCluster":
        return 0
    if "min_spines" in thresholds:
        return int(thresholds["min_spines"])
    return int(threshold_table()["min_spines"].value)


def uplinks_in_use(used: int, most: int, speeds: tuple[float, float], taper: float, leaves: int,
                   spine_ports: int, floor: int, declared: int | None) -> int:
    """Uplinks for `used` downlinks at the taper. With a declared spine count: the smallest multiple of it at or
    above that (up to `most`, the uplinks of a full leaf). Else the smallest count up to `most` that strips
    evenly over the fewest spines (at least `floor` of them when the uplinks allow)."""
    need = uplinks_for(used, speeds[0], speeds[1], taper)
    if not need or spine_ports <= 0 or leaves > spine_ports:
        return need
    if declared:
        multiple = -(-need // declared) * declared
        return multiple if multiple <= most else need

    def spines(u: int) -> int:
        return smallest_divisor(u, max(leaves * u / spine_ports, min(floor, u))) or u

    best = need
    for u in range(need + 1, max(need, most) + 1):
        if spines(u) < spines(best):
            best = u
    return best


def partial_uplinks(used: list[int], up: int, spines: int, speeds: tuple[float, float],
                    taper: float) -> tuple[int, ...]:
    """Uplinks of each leaf from its downlinks in use: what they need at the taper, rounded up to a multiple of
    the spines it reaches (every leaf-spine pair of a leaf carries the same count), never more than the tier's
    `up` (the fullest leaf's)."""
    ups = []
    for n in used:
        need = uplinks_for(n, speeds[0], speeds[1], taper)
        ups.append(min(up, -(-need // spines) * spines) if spines else up)
    return tuple(ups)


def leaf_ports_used(servers: int, shape: tuple[int, int, int, int, int], down: int, extra: int,
                    leaves: int) -> list[int]:
    """Downlinks in use on each leaf of one plane: its servers' ports (SU by SU, rail group by rail group), then
    the appliances, which fill free ports lowest leaf first (validator/derive/links.py)."""
    su, rails, lpr, spl, ppr = shape
    per_su = rails * lpr
    left = extra
    used = []
    for i in range(leaves):
        s, k = divmod(i, per_su)
        present = min(su, servers - s * su)
        n = max(0, min(spl, present - (k % lpr) * spl)) * ppr
        take = min(left, max(0, down - n))
        left -= take
        used.append(n + take)
    return used


def pod_spine_uplinks(leaf_ups: tuple[int, ...], per_pod: int, spines: int, spine_up: int, cores: int,
                      taper: float, speeds: tuple[float, float] = (1.0, 1.0)) -> tuple[int, ...]:
    """Three tiers: uplinks of the spines of each pod from their downlinks in use (each leaf of the pod sends
    each of them its uplinks / spines links), rounded up to a multiple of the cores of a group, never more than
    the tier's `spine_up` (a full pod's). `speeds`: the spines' down and up speeds (`spine.uplink_speed_gbps`)."""
    out = []
    for first in range(0, len(leaf_ups), per_pod):
        used = sum(leaf_ups[first:first + per_pod]) // max(1, spines)
        need = uplinks_for(used, speeds[0], speeds[1], taper)
        out.append(min(spine_up, -(-need // cores) * cores) if cores else spine_up)
    return tuple(out)
