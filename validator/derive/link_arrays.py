"""The link plan as arrays: the same links as `validator.derive.links.link_tuples`, in the same order, a
segment at a time, for the cage plan (`validator.derive.tally`) of a million-GPU design.

The bulk of a fabric's links (servers to leaves, leaves to spines, spines to cores) follow from the sizing
by arithmetic, so they are computed with numpy for a whole segment at once, one array per field; the few
links that need a walk (appliances, management ports) come from the generators of `links.py` as tuples.
A `Segment` is one run of links with the same roles and speed; tests/test_link_arrays.py checks that the
segments, in order, are exactly `link_tuples` on every example design.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from validator.derive.links import LinkTuple, appliance_links, oob_links, server_slots
from validator.derive.pairs import Usage
from validator.expand.plane import PlaneSize
from validator.expand.topology import Topology

Ints = npt.NDArray[np.int64]
Ints32 = npt.NDArray[np.int32]


@dataclass
class Segment:
    """Links a_role[a_idx]:a_port -> z_role[z_idx]:z_port at one speed, one array entry per link."""

    a_role: str
    z_role: str
    speed: float
    a_idx: Ints
    a_port: Ints
    z_idx: Ints
    z_port: Ints
    where: Ints | None = None   # positions in a list of links given one by one (`grouped`)

    def __len__(self) -> int:
        return len(self.a_idx)

    def tuples(self) -> Iterator[LinkTuple]:
        """The links as `link_tuples` gives them (tests)."""
        for a_i, a_p, z_i, z_p in zip(self.a_idx.tolist(), self.a_port.tolist(), self.z_idx.tolist(),
                                      self.z_port.tolist(), strict=True):
            yield (self.a_role, a_i, a_p, self.z_role, z_i, z_p, self.speed)


def segments(topology: Topology, fabric: str) -> Iterator[Segment | list[LinkTuple]]:
    """Every link of a fabric in `link_tuples` order: array segments and lists of tuples."""
    fab = topology.fabrics[fabric]
    if not fab.buildable:
        return
    if fabric == "oob":
        yield list(oob_links(topology, fab))
        for zone in fab.zone_planes():
            yield from _uplinks(zone.plane, 0, (zone.leaf_base, zone.spine_base, zone.core_base))
        return
    if fab.links_per_server and topology.servers:
        yield _server_links(topology, fabric)
    yield list(appliance_links(topology, fab))
    for p in range(fab.planes):
        yield from _uplinks(fab.plane, p)


def _server_links(topology: Topology, fabric: str) -> Segment:
    """Server s, link l -> its leaf and port (links.py: `link_tuples`), for every server at once."""
    fab = topology.fabrics[fabric]
    plane = fab.plane
    leaves = plane.tiers[0].count
    slots = np.array(server_slots(topology, fabric), dtype=np.int64).reshape(-1, 3)
    per_su = plane.rails * plane.leaves_per_rail
    s = np.arange(topology.servers, dtype=np.int64)
    su, pos = np.divmod(s, plane.su_servers)
    r, at = np.divmod(pos, plane.servers_per_leaf)
    base = su * per_su + r
    n = len(slots)
    offset = slots[:, 0] * leaves + slots[:, 1] * plane.leaves_per_rail
    return Segment("server", "leaf", fab.speed_gbps, np.repeat(s, n),
                   np.tile(np.arange(1, n + 1, dtype=np.int64), len(s)),
                   (base[:, None] + offset[None, :]).ravel(),
                   (at[:, None] * plane.ports_per_rail + slots[None, :, 2] + 1).ravel())


def _runs(counts: Ints) -> tuple[Ints, Ints]:
    """(device, k) of every k < counts[device], device by device."""
    device = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    return device, np.arange(len(device), dtype=np.int64) - np.repeat(starts, counts)


def _uplinks(plane: PlaneSize, p: int, bases: tuple[int, int, int] | None = None) -> Iterator[Segment]:
    """Leaf-spine (and spine-core) links of plane p (links.py: `_uplinks`)."""
    tiers = plane.tiers
    if len(tiers) < 2:
        return
    leaf, spine = tiers[0], tiers[1]
    spines = plane.spines_per_pod
    three = len(tiers) == 3
    lb, sb = (bases[0], bases[1]) if bases else (p * leaf.count, p * spine.count)
    ups = np.full(leaf.count, leaf.up_ports, dtype=np.int64)
    for k, n in enumerate(plane.partial_ups):
        if 0 <= plane.partial_from + k < leaf.count:
            ups[plane.partial_from + k] = n
    i, u = _runs(ups)
    if len(i):
        pod, q = np.divmod(i, plane.leaves_per_pod) if three else (0, i)
        j, m = np.divmod(u, spines)[::-1]
        yield Segment("leaf", "spine", leaf.up_speed_gbps, lb + i, leaf.down_ports + u + 1,
                      sb + pod * spines + j, q * math.ceil(leaf.up_ports / spines) + m + 1)
    if not three:
        return
    core = tiers[2]
    per_group = plane.cores_per_group
    pods = np.arange(spine.count, dtype=np.int64) // max(1, spines)
    own = np.array(plane.pod_spine_ups or (0,), dtype=np.int64)
    ups = np.where(pods < len(plane.pod_spine_ups), own[np.minimum(pods, len(own) - 1)], spine.up_ports)
    g, v = _runs(ups)
    if len(g):
        pod, j = np.divmod(g, spines)
        c, m = np.divmod(v, per_group)[::-1]
        cb = bases[2] if bases else p * core.count
        yield Segment("spine", "core", spine.up_speed_gbps, sb + g, spine.down_ports + v + 1,
                      cb + j * per_group + c, pod * math.ceil(spine.up_ports / per_group) + m + 1)


def grouped(links: list[LinkTuple], switch_roles: frozenset[str] | tuple[str, ...]) -> Iterator[Segment]:
    """Links given one by one (appliances, management ports) as one segment per distinct (A role, Z role, speed),
    in order of first appearance, each with `where`: the positions of its links in `links`. A port is an
    integer at a switch; at an adapter a named port ("mgmt") is its first cage's, as `CageIndex.end` has it."""
    if not links:
        return
    a_roles, a_i, a_p, z_roles, z_i, z_p, speeds = zip(*links, strict=True)
    keys: dict[tuple[str, str, float], int] = {}
    group = np.fromiter((keys.setdefault(k, len(keys)) for k in zip(a_roles, z_roles, speeds, strict=True)),
                        dtype=np.int64, count=len(links))
    a_idx, z_idx = np.array(a_i, dtype=np.int64), np.array(z_i, dtype=np.int64)
    for g, (a_role, z_role, speed) in enumerate(keys):
        where = np.flatnonzero(group == g)
        at = where.tolist()
        yield Segment(a_role, z_role, speed, a_idx[where], _ports([a_p[k] for k in at], a_role in switch_roles),
                      z_idx[where], _ports([z_p[k] for k in at], z_role in switch_roles), where)


def _ports(ports: list[int | str], switch: bool) -> Ints:
    if switch:
        return np.array([int(p) for p in ports], dtype=np.int64)
    return np.array([p if isinstance(p, int) else 1 for p in ports], dtype=np.int64)


def use(usage: Usage, seg: Segment) -> None:
    """Add an array segment's links to a fabric's usage (as `Usage.add` does link by link)."""
    usage.total += len(seg)
    a_role = seg.a_role.split("/")[0] + "-mgmt" if "/" in seg.a_role else seg.a_role   # as `Usage.add`
    key = (a_role, seg.z_role, seg.speed)
    usage.bundles[key] = usage.bundles.get(key, 0) + len(seg)
    for counts, target in ((np.bincount(seg.z_idx), usage.down[seg.z_role]),
                           (np.bincount(seg.a_idx), usage.up.get(seg.a_role))):
        if target is not None:
            used = np.flatnonzero(counts)
            if len(used):       # the span of devices the segment reaches, added at once (Python ints back)
                low, high = int(used[0]), int(used[-1]) + 1
                target[low:high] = (np.array(target[low:high], dtype=np.int64) + counts[low:high]).tolist()


def release_freed_arrays() -> None:
    """Let the arrays of a large plan go back to the system when freed (glibc): glibc's allocator raises its
    mmap threshold to the size of each large block freed (up to 32 MiB), so later arrays come from its heap
    and stay there once freed. A fixed threshold keeps every array over 128 KiB in a mapping of its own: the
    1M-GPU site's peak RSS 679 -> 534 MiB for the same CPU time. Elsewhere (or without glibc) nothing."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(-3, 128 * 1024)        # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


def unique(key: npt.NDArray[Any], inverse: bool = False) -> tuple[npt.NDArray[Any], Ints, Ints, Ints | None]:
    """`np.unique(key, return_index=True, return_counts=True[, return_inverse=True])` with the same results,
    sorting only the runs of equal neighbours: links come in runs (a server's links to one leaf rack, a
    leaf's to one spine rack), so a million-GPU plan's seven million keys sort as a few hundred thousand.
    The inverse is 32-bit below 2**31 keys (the same indices)."""
    n = len(key)
    if not n:
        uniq, first, inv, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        return uniq, first, counts, inv.ravel() if inverse else None
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(key[1:], key[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    del change
    uniq, first, inv = _dense_unique(key[starts], n) if key.dtype.kind in "iu" else \
        np.unique(key[starts], return_index=True, return_inverse=True)
    inv = inv.ravel()
    lengths = np.diff(np.append(starts, n))
    counts = np.bincount(inv, weights=lengths, minlength=len(uniq)).astype(np.int64)
    if not inverse:
        return uniq, starts[first], counts, None
    if n < np.iinfo(np.int32).max:
        inv = inv.astype(np.int32)      # half the memory of the whole-link inverse (an index all the same)
    return uniq, starts[first], counts, np.repeat(inv, lengths)


def in_order(key: npt.NDArray[Any], width: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """The distinct keys in order of first appearance, each as (key // width, key % width), with its count and the
    position of its first."""
    uniq, first, counts, _i = unique(key)
    order = np.argsort(first, kind="stable")
    high, low = np.divmod(uniq[order], width)
    return high.tolist(), low.tolist(), counts[order].tolist(), first[order].tolist()


def _dense_unique(runs: npt.NDArray[Any], n: int) -> tuple[npt.NDArray[Any], Ints, Ints]:
    """`np.unique(runs, return_index=True, return_inverse=True)` of integer keys without a sort when their span
    is at most `n` (the links: so the table below is no larger than a link array): a table over the span
    marks the keys present, its running count numbers them in order, the least position of each is its first.
    A wider span sorts."""
    if not len(runs):
        return np.unique(runs, return_index=True, return_inverse=True)
    low, high = int(runs.min()), int(runs.max())
    span = high - low + 1
    if span > max(n, 1 << 16):
        return np.unique(runs, return_index=True, return_inverse=True)
    offset = (runs - low).astype(np.int64)
    present = np.zeros(span, dtype=bool)
    present[offset] = True
    number = np.cumsum(present, dtype=np.int64) - 1
    inverse = number[offset]
    del number, offset
    uniq = (np.flatnonzero(present) + low).astype(runs.dtype)
    first = np.full(len(uniq), len(runs), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(runs), dtype=np.int64))
    return uniq, first, inverse


def first_ends(a: Ints32, z: Ints32, size: int, mid: Ints32, a_part: Ints32, z_part: Ints32
               ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], Ints, int]:
    """The link ends (cages `a`, `z`; the part each link's media puts at either end) in walk order, A then Z
    of link 0, then link 1, ...: the first to reach a cage puts its part in it. Returns the A ends that do,
    the Z ends that do, the links with an end whose part differs from its cage's (never, by construction:
    said rather than counted twice) and the cages holding a part."""
    n = len(a)
    kind = np.int32 if 2 * n < np.iinfo(np.int32).max else np.int64
    # end 2k is link k's A end, 2k + 1 its Z end
    first: npt.NDArray[np.signedinteger[Any]] = np.full(size, 2 * n, dtype=kind)
    end: npt.NDArray[np.signedinteger[Any]] = np.arange(0, 2 * n, 2, dtype=kind)
    np.minimum.at(first, a, end)
    end += 1
    np.minimum.at(first, z, end)
    held = first < 2 * n
    cages = int(np.count_nonzero(held))
    at = first[held]
    media = mid[at >> 1]
    part = np.full(len(first), -1, dtype=np.int32)
    part[held] = np.where((at & 1).astype(bool), z_part[media], a_part[media])
    del at, held, media
    z_new = first[z] == end
    end -= 1
    a_new = first[a] == end
    del first, end
    # an end that put its part in its cage agrees with it by definition: the others are compared
    clash = a_part[mid] != part[a]
    clash |= z_part[mid] != part[z]
    return a_new, z_new, np.flatnonzero(clash), cages


def multi_peer(a: Ints32, z: Ints32, size: int) -> npt.NDArray[np.bool_]:
    """Cages whose links go to more than one peer cage."""
    low = np.full(size, np.iinfo(np.int32).max, dtype=np.int32)
    high = np.full(size, -1, dtype=np.int32)
    for x, y in ((a, z), (z, a)):
        np.minimum.at(low, x, y)
        np.maximum.at(high, x, y)
    multi: npt.NDArray[np.bool_] = (high >= 0) & (low != high)
    return multi


def cage_groups(a: Ints32, z: Ints32, size: int) -> Ints32:
    """The group of every cage joined to others by links, named by its least cage: each cage takes the least
    label of its links' ends, then follows labels to their own, until every link's two ends agree."""
    label = np.arange(size, dtype=np.int32)
    low = np.minimum(a, z)          # label[a], label[z] while every cage is its own label
    while True:
        np.minimum.at(label, a, low)
        np.minimum.at(label, z, low)
        del low
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        del jumped
        low, high = label[a], label[z]
        if np.array_equal(low, high):
            return label
        np.minimum(low, high, out=low)
        del high
