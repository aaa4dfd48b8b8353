"""What each switch operating system can express, as data (validator/data/switch_os.yaml,
validator/data/sonic_buffers.yaml), and the design's lossless settings worked out for it once:
the PFC watchdog timers (exactly, or the nearest values the OS can take) and the lossless headroom
(where it comes from, or why it cannot be rendered). The rules (check/rules/switch_os_fit.py) and
the configurations (emit/render/) both read these, so a design the rules accept renders exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

from validator.base.facts import fact
from validator.base.tables import sonic_buffers, values

if TYPE_CHECKING:
    from validator.derive.cabling import Plan


@cache
def _values(name: str) -> dict[str, Any]:
    return values(name)


@fact
class WatchdogTimers:
    """A PFC watchdog as one OS sets it: `settings` (OS knob -> ms or count) realise `detection_ms` and
    `restoration_ms` exactly; `problems` says what it cannot express, with the nearest values it can."""

    os: str
    detection_ms: int
    restoration_ms: int
    settings: tuple[tuple[str, int], ...]
    problems: tuple[str, ...] = ()

    def get(self, knob: str) -> int:
        return dict(self.settings)[knob]


def _range(os: str, knob: str) -> tuple[int, int, int]:
    low, high, step = _values("switch_os.yaml")["pfc_watchdog_timers"][os][knob]
    return int(low), int(high), int(step)


def _nearest(value: int, low: int, high: int, step: int) -> list[int]:
    """The values next to `value` on the grid low, low+step, ..., high (one or two of them)."""
    if value <= low:
        return [low]
    if value >= high:
        return [high]
    below = low + (value - low) // step * step
    return sorted({below, min(high, below + step)})


def _fits(value: int, low: int, high: int, step: int) -> bool:
    return low <= value <= high and (value - low) % step == 0


def _ms(values: list[int]) -> str:
    return " or ".join(f"{v} ms" for v in values)


def _plain(os: str, detection: int, restoration: int) -> WatchdogTimers:
    """SONiC and EOS set both timers directly on a grid; the poll interval follows (at most the
    detection time, and SONiC's 200 ms default or EOS's half the detection time when that fits)."""
    problems = []
    for knob, value in (("detection_ms", detection), ("restoration_ms", restoration)):
        grid = _range(os, knob)
        if not _fits(value, *grid):
            problems.append(f"{os} cannot set a PFC watchdog {knob.split('_')[0]} time of {value} ms "
                            f"(range {grid[0]}-{grid[1]} ms in steps of {grid[2]} ms); nearest: "
                            f"{_ms(_nearest(value, *grid))}")
    low, high, _ = _range(os, "poll_ms")
    wanted = int(_values("sonic_qos.yaml")["pfc_watchdog_poll_ms"]) if os == "sonic" else max(1, detection // 2)
    poll = max(low, min(high, wanted, detection, restoration))
    return WatchdogTimers(os, detection, restoration, (("poll_ms", poll),), tuple(problems))


def _nvue_pairs(detection: int) -> Iterator[tuple[int, int]]:
    """(polling-interval, robustness) with polling x robustness = detection, finest polling first."""
    p_low, p_high, _ = _range("cumulus", "poll_ms")
    r_low, r_high, _ = _range("cumulus", "robustness")
    for poll in range(p_low, min(p_high, detection) + 1):
        if detection % poll == 0 and r_low <= detection // poll <= r_high:
            yield poll, detection // poll


def _nvue(detection: int, restoration: int, restoration_set: bool) -> WatchdogTimers:
    """NVUE detects a storm after polling-interval x robustness and has no restoration setting."""
    pair = next(_nvue_pairs(detection), None)
    problems = []
    if pair is None:
        # every multiple of 100 ms up to 5,000,000 ms is expressible: the nearest is at most 100 ms away
        below = next((d for d in range(detection - 1, max(0, detection - 101), -1) if next(_nvue_pairs(d), None)),
                     None)
        above = next((d for d in range(detection + 1, detection + 101) if next(_nvue_pairs(d), None)), None)
        nearest = [d for d in (below, above) if d] or [5_000_000]
        problems.append(f"NVUE cannot set a PFC watchdog detection time of {detection} ms (polling-interval "
                        f"100-5000 ms x robustness 1-1000); nearest: {_ms(nearest)}")
        pair = next(_nvue_pairs(nearest[-1]), (5000, 1000))
    if restoration_set:
        problems.append(f"NVUE has no PFC watchdog restoration setting: the design's {restoration} ms cannot "
                        "reach Cumulus Linux, which restores the queue when the storm stops")
    return WatchdogTimers("cumulus", detection, restoration,
                          (("polling-interval", pair[0]), ("robustness", pair[1])), tuple(problems))


def watchdog_timers(os: str, detection_ms: int, restoration_ms: int, restoration_set: bool = True) -> WatchdogTimers:
    """The design's PFC watchdog on `os` (sonic, eos or cumulus)."""
    if os == "cumulus":
        return _nvue(detection_ms, restoration_ms, restoration_set)
    return _plain(os if os in ("sonic", "eos") else "sonic", detection_ms, restoration_ms)


@fact
class Headroom:
    """Where one port's lossless headroom comes from on its OS: `profile` (a SONiC pg_profile_lookup
    row, by speed in Mb/s) or `source`; `problem` when it cannot be rendered."""

    os: str
    asic: str
    speed_mbps: int
    method: str                      # buffer-data | cable-length | platform
    row_mbps: int | None = None      # SONiC traditional model: the published row used
    problem: str | None = None


@cache
def lossless_headroom(os: str, asic: str, speed_mbps: int) -> Headroom:
    method = str(_values("switch_os.yaml")["lossless_headroom"].get(os, "none"))
    if method == "cable-length":
        if asic not in _values("switch_os.yaml")["nvue_lossless_asics"]:
            return Headroom(os, asic, speed_mbps, method, problem=f"Cumulus Linux lossless headroom is recorded "
                            f"for Spectrum through Spectrum-4 only, not {asic}")
        return Headroom(os, asic, speed_mbps, method)
    if method != "buffer-data":
        return Headroom(os, asic, speed_mbps, method)
    entry = sonic_buffers().get(asic)
    if entry is None:
        return Headroom(os, asic, speed_mbps, method, problem=f"no SONiC lossless buffer data is recorded for the "
                        f"{asic} ASIC (validator/data/sonic_buffers.yaml)")
    if entry.model == "dynamic":
        return Headroom(os, asic, speed_mbps, method)
    rows = sorted(entry.pg_lossless)
    # headroom grows with speed (bytes in flight on the cable while the pause takes effect): a row of a
    # higher speed on the same ASIC over-reserves for a slower port, never under-reserves
    row = next((s for s in rows if s >= speed_mbps), None)
    if row is None:
        return Headroom(os, asic, speed_mbps, method, problem=f"no published lossless headroom "
                        f"(pg_profile_lookup.ini) for {asic} at {speed_mbps // 1000}G or faster")
    return Headroom(os, asic, speed_mbps, method, row)


def port_cable_lengths(plan: Plan, fabric: str) -> dict[str, dict[int, int]]:
    """Switch name -> port -> length in whole metres of the cable bought for it (the length class of
    the cabling plan): what a lossless port's headroom is sized for (SONiC CABLE_LENGTH, NVUE PFC
    cable-length). Media are chosen once per pair of racks, as in the cabling plan."""
    from validator.derive.links import device_namer, link_tuples
    from validator.expand.topology import SWITCH_ROLES

    topology = plan.topology
    racks_of = plan.rack_lists(fabric)
    lengths: dict[tuple[int, int, int], int] = {}
    by_index: dict[tuple[str, int], dict[int, int]] = {}     # (role, index) -> port -> metres; named at the end
    cages = plan.cage_plan
    role_racks: dict[str, list[int]] = {}
    for k, (a_role, a_idx, a_port, z_role, z_idx, z_port, _speed) in enumerate(
            link_tuples(topology, fabric), start=plan.first_link(fabric)):
        a_racks = role_racks.get(a_role) or role_racks.setdefault(a_role, racks_of(a_role))
        z_racks = role_racks.get(z_role) or role_racks.setdefault(z_role, racks_of(z_role))
        a_rack, z_rack = a_racks[a_idx], z_racks[z_idx]
        media = cages.media(k)      # the media the cage plan chose for this link (derive/tally.py)
        key = (id(media), a_rack, z_rack)
        metres = lengths.get(key)
        if metres is None:
            metres = lengths[key] = max(1, math.ceil(media.length_m or plan.layout.distance_m(a_rack, z_rack)))
        end = by_index.get((z_role, z_idx))
        if end is None:
            end = by_index[(z_role, z_idx)] = {}
        end[z_port] = metres
        if a_role in SWITCH_ROLES and isinstance(a_port, int):
            end = by_index.get((a_role, a_idx))
            if end is None:
                end = by_index[(a_role, a_idx)] = {}
            end[a_port] = metres
    namers: dict[str, Any] = {}
    out: dict[str, dict[int, int]] = {}
    for (role, index), ports in by_index.items():
        namer = namers.get(role) or namers.setdefault(role, device_namer(topology, fabric, role))
        out.setdefault(str(namer(index)), {}).update(ports)
    return out
