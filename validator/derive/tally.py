"""The cage plan and the tally: one module (or cable plug) per cage, chosen for every lane of it at once.

Every link end sits in a cage (`validator.derive.cages`). A cage holds one module or one cable plug, so
every lane of a cage has the same kind of media, and the module must reach the longest of them. That
ties cages together: a twin-port leaf cage with one lane to a server in its rack and one to a server two
racks away needs an optic, so both servers' cages need optics too, and so on. The plan joins the two
cages of every link (union-find) and gives each group the longest run and the least media kind that
every link of it can take (`floor`, raised until no link needs more), so the choice is the same for
every lane of a cage by construction. A cable with its own plugs (DAC, ACC, AOC) is taken only where it
serves every lane of the cages it plugs into (`media.serves`): a straight twin-port cable joins two
cages whose lanes all go to each other, a splitter's split ends go in single-lane adapter cages.

The tally then counts what is bought: one transceiver per cage that holds one (per switch and per rack
of adapters), one cable per link of fiber or single-link cable, one per joined pair of cages for a
straight multi-link cable and one per switch cage for a splitter.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from validator.derive import link_arrays
from validator.derive.link_arrays import Segment, cage_groups, first_ends, grouped, multi_peer, segments, unique, use
from validator.derive.links import LinkTuple
from validator.derive.media import KINDS, Media
from validator.derive.pairs import LinkSummary, Usage
from validator.expand.topology import SWITCH_ROLES
from validator.resolve.catalog.entries import Transceiver

if TYPE_CHECKING:
    from validator.derive.cabling import Plan

# a class of links: what the media choice depends on besides the cages' group
# (fabric, a_role, z_role, a_rack, z_rack, speed, a_lanes, z_lanes, a_form, z_form)
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
LinkClass = tuple[str, str, str, int, int, float, int, int, tuple[str, str | None], tuple[str, str | None]]


@dataclass
class Tally:
    """Counts over every link, in one pass: what the BOM and the optics rule need."""

    # (fabric, cable, length, A rack, Z rack) -> links: the rack power shares cable power per link
    cable_runs: Counter[tuple[str, str, float, int, int]] = field(default_factory=Counter)
    cables_bought: Counter[tuple[str, str, float]] = field(default_factory=Counter)  # whole cables
    # (fabric, part, role, rack) -> modules
    node_xcvr: Counter[tuple[str, str, str, int]] = field(default_factory=Counter)
    switch_xcvr: dict[tuple[str, str, str], Counter[int]] = field(default_factory=dict)  # -> modules per switch index
    # (fabric, end, problem kind) -> (a role, a index, z role, z index, media, length): one example each
    problems: dict[tuple[str, str, str], tuple[str, int, str, int, Media, float]] = field(default_factory=dict)
    links: int = 0
    cages: int = 0                   # cages holding a module or a cable plug
    summaries: dict[str, LinkSummary] = field(default_factory=dict)

    @cached_property
    def cables(self) -> Counter[tuple[str, str, float]]:
        """Links per (fabric, cable, length), over every pair of racks."""
        out: Counter[tuple[str, str, float]] = Counter()
        for (fabric, part, length, _a, _z), links in self.cable_runs.items():
            out[(fabric, part, length)] += links
        return out


class CagePlan:
    """The links as cage pairs, the groups of joined cages and each group's media floor and reach.

    Held as numpy arrays, one entry per link (cage ids, device indices, link class, chosen media) and per cage
    (group root, lanes used, peers), each pass a whole-array operation: a million-GPU design's seven million
    links take a few seconds and stay within a few hundred megabytes (benchmarks/run.py)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.classes: list[LinkClass] = []
        self.lengths: list[float] = []
        self.medias: list[Media] = []
        self._intern: dict[LinkClass, int] = {}
        # what the media choice reads of a class (all but the Z role and the racks beyond their distance):
        # classes of one such kind get the same media, so the chooser runs once per kind
        self._kinds: dict[tuple[object, ...], int] = {}
        self.kind_of: list[int] = []
        self.kind_class: list[int] = []
        self.summaries: dict[str, LinkSummary] = {}
        self._rack_arrays: dict[int, npt.NDArray[np.int64]] = {}
        parts: list[list[Any]] = [list(p) for fabric in plan.topology.fabrics for p in self._fabric(fabric)]
        self._rack_arrays.clear()
        columns = []
        for i in range(5):      # column by column, each segment's array let go once copied
            columns.append(np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, np.int32))
            for p in parts:
                p[i] = None
        a, z, a_idx, z_idx, cls = columns
        self.a, self.z, self.a_idx, self.z_idx, self.cls = a, z, a_idx, z_idx, cls
        # per cage (lanes used, more than one peer, group, longest run of the group), let go once settled
        size = plan.cages.size
        used = (np.bincount(a, minlength=size) + np.bincount(z, minlength=size)).astype(np.int32)
        multi = multi_peer(a, z, size)
        ra = cage_groups(a, z, size)[a]
        # each group's longest run as an index into the distinct runs (sorted, so the greatest index is the longest)
        needs, of_class = np.unique(np.array(self.lengths, dtype=np.float64), return_inverse=True)
        need = np.zeros(size, dtype=np.int32)
        if len(cls):
            np.maximum.at(need, ra, of_class.astype(np.int32)[cls])
        self.mid = array("i")
        self._settle(used, multi, ra, need, needs.tolist())

    def _fabric(self, fabric: str) -> Iterator[tuple[I32, I32, I32, I32, I32]]:
        """(A cage, Z cage, A index, Z index, class) of every link of a fabric, segment by segment; on the way,
        the fabric's link summary (`validator.derive.pairs`: bundles and ports in use per switch)."""
        usage = Usage(self.plan.topology, fabric)
        for seg in segments(self.plan.topology, fabric):
            if isinstance(seg, Segment):
                if len(seg):
                    use(usage, seg)
                    yield self._segment(fabric, seg)
            elif seg:
                yield self._tuples(fabric, seg, usage)
        self.summaries[fabric] = usage.summary()

    def _class(self, key: LinkClass) -> int:
        c = self._intern.get(key)
        if c is None:
            c = self._intern[key] = len(self.classes)
            self.classes.append(key)
            length = self.plan.layout.distance_m(key[3], key[4])
            self.lengths.append(length)
            kind = (key[0], key[1], *key[5:], key[3] == key[4], length)
            k = self._kinds.get(kind)
            if k is None:
                k = self._kinds[kind] = len(self.kind_class)
                self.kind_class.append(c)
            self.kind_of.append(k)
        return c

    def _segment(self, fabric: str, seg: Segment) -> tuple[I32, I32, I32, I32, I32]:
        """One array segment: cages by arithmetic, classes by the distinct (racks, cage types) it holds,
        numbered in order of first appearance as a walk link by link would."""
        a, z, first, class_of, inverse = self._distinct(fabric, seg)
        ids = [0] * len(first)        # a list: a numpy scalar store per class costs more than the class
        number = self._class
        for u in np.argsort(first, kind="stable").tolist():
            ids[u] = number(class_of(u))
        return (a.astype(np.int32), z.astype(np.int32), seg.a_idx.astype(np.int32, copy=False),
                seg.z_idx.astype(np.int32, copy=False), np.array(ids, dtype=np.int32)[inverse])

    def _distinct(self, fabric: str, seg: Segment) -> tuple[I64, I64, I64, Callable[[int], LinkClass], I64]:
        """(A cages, Z cages, first link of each distinct class, its class, the distinct class of each link)."""
        index = self.plan.cages
        a, ta, a_types = index.arrays(fabric, seg.a_role, seg.a_idx, seg.a_port)
        z, tz, z_types = index.arrays(fabric, seg.z_role, seg.z_idx, seg.z_port)
        racks = self.plan.rack_lists(fabric)
        a_racks, z_racks = self._racks(racks(seg.a_role), seg.a_idx), self._racks(racks(seg.z_role), seg.z_idx)
        n_racks = int(max(a_racks.max(initial=0), z_racks.max(initial=0))) + 1
        node = index.block(fabric, seg.a_role).node
        key = a_racks          # ((A rack * racks + Z rack) * A types + A type) * Z types + Z type, in place
        for factor, term in ((n_racks, z_racks), (len(a_types), ta), (len(z_types), tz)):
            key *= factor
            key += term
        del a_racks, z_racks, ta, tz, term
        uniq, first, _n, inverse = unique(key, inverse=True)
        del key
        assert inverse is not None
        keys: list[int] = uniq.tolist()

        def class_of(u: int) -> LinkClass:
            rest, t_z = divmod(keys[u], len(z_types))
            rest, t_a = divmod(rest, len(a_types))
            a_rack, z_rack = divmod(rest, n_racks)
            (a_lanes, a_form), (z_lanes, z_form) = a_types[t_a], z_types[t_z]
            if node and not a_form[0]:   # an adapter of unknown type: the switch's family, flat if OSFP
                a_form = (z_form[0], "flat" if z_form[0].startswith("OSFP") else None)
            return (fabric, seg.a_role, seg.z_role, a_rack, z_rack, seg.speed, a_lanes, z_lanes, a_form, z_form)
        return a, z, first, class_of, inverse

    def _tuples(self, fabric: str, links: list[LinkTuple], usage: Usage) -> tuple[I32, I32, I32, I32, I32]:
        """Links given one by one (appliances, management ports): as arrays per (roles, speed), classes numbered
        in order of first appearance over all of them, as a walk link by link would."""
        cols = [np.zeros(len(links), dtype=np.int32) for _ in range(5)]
        done: list[tuple[I64, Callable[[int], LinkClass], I64]] = []
        found: list[tuple[int, int, int]] = []      # (first link, group, distinct class of it)
        for seg in grouped(links, SWITCH_ROLES):
            use(usage, seg)
            a, z, first, class_of, inverse = self._distinct(fabric, seg)
            assert seg.where is not None
            for col, values in zip(cols, (a, z, seg.a_idx, seg.z_idx), strict=False):
                col[seg.where] = values
            found.extend((at, len(done), u) for u, at in enumerate(seg.where[first].tolist()))
            done.append((seg.where, class_of, inverse))
        ids = [np.zeros(len(inverse), dtype=np.int64) for _w, _c, inverse in done]
        for _at, g, u in sorted(found):
            ids[g][u] = self._class(done[g][1](u))
        for (where, _c, inverse), group_ids in zip(done, ids, strict=True):
            cols[4][where] = group_ids[inverse]
        return cols[0], cols[1], cols[2], cols[3], cols[4]

    def _racks(self, racks: list[int], index: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The rack of each device index (a role standing in one place: one rack), from an array made once per role."""
        if not len(racks):
            return np.full(len(index), racks[0], dtype=np.int64)
        found = self._rack_arrays.get(id(racks))
        if found is None:
            found = self._rack_arrays[id(racks)] = np.array(racks, dtype=np.int64)
        return found[index]

    def media(self, k: int) -> Media:
        """The media of link k (the same object for every link with the same choice)."""
        return self.medias[self.mid[k]]

    def _settle(self, used: I32, multi: npt.NDArray[np.bool_], ra: I32, need: I32, need_list: list[float]) -> None:
        """Raise each group's floor to the highest kind any of its links takes, until none takes more; then
        keep each link's choice (an index into `medias`). Links are handled by their distinct (class, floor,
        reach, shape): the media chooser runs once for each. `need` is each group's longest run as an index
        into `need_list` (ascending), so distinct keys sort as they would by the run itself."""
        a, z = self.a, self.z
        if not len(a):
            return
        width = int(used.max()) + 1
        # shape (A lanes used, Z lanes used, A single peer, Z single peer) packed per cage, then per link
        single = (~multi).astype(np.int32)
        del multi
        packed = (used * (4 * width) + single * 2)[a]
        packed += (used * 4 + single)[z]
        del used, single
        shapes, _f, _n, shape_of = unique(packed, inverse=True)
        del packed
        assert shape_of is not None
        floors = len(KINDS)
        bound = (max(self.kind_of) + 1) * len(need_list) * len(shapes) * floors
        base: npt.NDArray[Any] = np.array(     # 32 bits: half the memory of the sorts below
            self.kind_of, dtype=np.int32 if bound < np.iinfo(np.int32).max - 1 else np.int64)[self.cls]
        base *= len(need_list)
        base += need[ra]
        base *= len(shapes)
        base += shape_of
        level = np.zeros(len(need), dtype=np.int8)      # each cage's floor
        del shape_of, need
        known: dict[int, int] = {}
        chosen: dict[int, tuple[int, int]] = {}     # packed (class, need, shape, floor) -> (media, kind), all passes
        shape_list: list[int] = shapes.tolist()
        while True:
            uniq, _f, _n, inverse = unique(base * floors + level[ra], inverse=True)
            assert inverse is not None
            mid_list, kind_list = [], []          # lists: a numpy scalar store per choice costs more than it
            for packed in uniq.tolist():
                got = chosen.get(packed)
                if got is None:
                    got = chosen[packed] = self._choice(packed, floors, shape_list, need_list, width, known)
                mid_list.append(got[0])
                kind_list.append(got[1])
            mids = np.array(mid_list, dtype=np.int32)
            raised = level.copy()
            np.maximum.at(raised, ra, np.array(kind_list, dtype=np.int8)[inverse])
            if np.array_equal(raised, level):
                break
            level = raised
        self.mid = array("i", [0]) * len(a)
        np.take(mids, inverse, out=np.frombuffer(self.mid, dtype=np.int32))

    def _choice(self, packed: int, floors: int, shapes: list[int], needs: list[float], width: int,
                known: dict[int, int]) -> tuple[int, int]:
        """(media index, kind index) of one distinct packed (class kind, need, shape, floor)."""
        rest, floor = divmod(packed, floors)
        rest, s = divmod(rest, len(shapes))
        c, n = divmod(rest, len(needs))
        rest, z_one = divmod(shapes[s], 2)
        rest, a_one = divmod(rest, 2)
        shape = (*divmod(rest, width), bool(a_one), bool(z_one))
        m = self.plan.choose(self.classes[self.kind_class[c]], floor, needs[n], shape)
        mid = known.get(id(m))
        if mid is None:
            mid = known[id(m)] = len(self.medias)
            self.medias.append(m)
        return mid, KINDS.index(m.kind) if m.kind in KINDS else -1


def build_tally(plan: Plan) -> Tally:
    """Modules per cage, cables per link or per joined cages, and the problems, over every link: each count a
    whole-array operation over the links, keyed by (class, media) and in the order a walk would meet them."""
    cp = plan.cage_plan
    out = Tally()
    medias, classes, n = cp.medias, cp.classes, len(cp.a)
    out.links = n
    out.summaries = cp.summaries
    if not n:
        return out
    mid = np.frombuffer(cp.mid, dtype=np.int32)
    media_n = len(medias)
    names: dict[str, int] = {}
    a_part = np.array([names.setdefault(_plug(m, m.a_transceiver), len(names)) for m in medias], dtype=np.int32)
    z_part = np.array([names.setdefault(_plug(m, m.z_transceiver), len(names)) for m in medias], dtype=np.int32)
    a_new, z_new, clash, out.cages = first_ends(cp.a, cp.z, plan.cages.size, mid, a_part, z_part)
    whole = np.where(np.array([bool(m.cable and m.cable.split) for m in medias], dtype=bool)[mid], z_new, a_new)
    whole |= np.array([not m.cable or m.cable.links_per_cable == 1 for m in medias], dtype=bool)[mid]
    pair: npt.NDArray[np.signedinteger[Any]] = cp.cls.astype(
        np.int32 if len(classes) * media_n < np.iinfo(np.int32).max else np.int64)
    pair *= media_n
    pair += mid                                             # (class, media) of every link
    seen, firsts = _counts(pair, media_n)
    bought = _counts(pair[whole], media_n)[0]
    del whole, pair
    _fill(plan, out, seen, firsts, Counter(bought))
    _modules(plan, out, mid, a_new, z_new)
    for k in clash.tolist():
        c = classes[cp.cls[k]]
        out.problems.setdefault((c[0], "switches" if c[1] in SWITCH_ROLES else "servers", "cage"),
                                (c[1], int(cp.a_idx[k]), c[2], int(cp.z_idx[k]), cp.media(k), cp.lengths[cp.cls[k]]))
    return out


def _counts(pair: npt.NDArray[np.signedinteger[Any]], media_n: int
            ) -> tuple[dict[tuple[int, ...], int], dict[tuple[int, ...], int]]:
    """Links per (class, media) in order of first appearance, and the position of the first of each."""
    c, m, counts, first = link_arrays.in_order(pair, media_n)
    keys: list[tuple[int, ...]] = list(zip(c, m, strict=True))
    return dict(zip(keys, counts, strict=True)), dict(zip(keys, first, strict=True))


def _fill(plan: Plan, out: Tally, seen: dict[tuple[int, ...], int], firsts: dict[tuple[int, ...], int],
          bought: Counter[tuple[int, ...]]) -> None:
    """Turn the per-(class, media) counts into the tally's cable counts and problems."""
    cp = plan.cage_plan
    classes, medias, lengths = cp.classes, cp.medias, cp.lengths
    plugs = [m.cable.id if m.cable else None for m in medias]
    # what Plan.check records something for: unresolved, copper between racks, short of the run
    unresolved = [m.kind == "unresolved" for m in medias]
    copper = [m.copper and m.kind != "cat6" for m in medias]
    runs: dict[tuple[str, str, float, int, int], int] = {}      # a dict, then the Counter: the same order
    for (c, mid), links in seen.items():
        fabric, a_role, z_role, a_rack, z_rack, speed = classes[c][:6]
        m, length, plug = medias[mid], lengths[c], plugs[mid]
        key = (fabric, plug if plug is not None else f"UNRESOLVED-{speed:g}G", m.length_m, a_rack, z_rack)
        runs[key] = runs.get(key, 0) + links
        if unresolved[mid] or (copper[mid] and a_rack != z_rack) or m.reach_m < length:
            first = firsts[(c, mid)]
            plan.check(out, fabric, a_role, int(cp.a_idx[first]), z_role, int(cp.z_idx[first]), a_rack, z_rack, m,
                       length)
    out.cable_runs.update(runs)
    for (c, mid), n in bought.items():
        fabric, m = classes[c][0], medias[mid]
        out.cables_bought[(fabric, m.cable.id if m.cable else f"UNRESOLVED-{classes[c][5]:g}G", m.length_m)] += n


def _modules(plan: Plan, out: Tally, mid: npt.NDArray[np.int32], a_new: npt.NDArray[np.bool_],
             z_new: npt.NDArray[np.bool_]) -> None:
    """Modules per switch and per rack of adapters: the links that put the first part in a cage, counted by
    (fabric, role, module) and switch or rack, in the order a walk meets them (A ends, then Z ends)."""
    cp = plan.cage_plan
    classes = cp.classes
    ends: dict[tuple[str, str], int] = {}
    a_end = np.array([ends.setdefault((c[0], c[1]), len(ends)) for c in classes], dtype=np.int64)
    z_end = np.array([ends.setdefault((c[0], c[2]), len(ends)) for c in classes], dtype=np.int64)
    names: dict[str, int] = {}
    xa = np.array([names.setdefault(m.a_transceiver.id, len(names)) if m.a_transceiver else -1
                   for m in cp.medias], dtype=np.int64)
    xz = np.array([names.setdefault(m.z_transceiver.id, len(names)) if m.z_transceiver else -1
                   for m in cp.medias], dtype=np.int64)
    roles, parts = list(ends), list(names)
    a_switch = np.array([c[1] in SWITCH_ROLES for c in classes], dtype=bool)
    a_rack = np.array([c[3] for c in classes], dtype=np.int64)
    switch_xcvr: dict[tuple[str, str, str], Counter[int]] = defaultdict(Counter)
    keep = np.flatnonzero(a_new & (xa >= 0)[mid])        # the A ends that put a module in a cage
    kept, x = cp.cls[keep], xa[mid[keep]]
    where = np.where(a_switch[kept], cp.a_idx[keep], a_rack[kept])
    for g, w, n in _grouped(a_end[kept] * len(parts) + x, where):
        (fabric, role), part = roles[g // len(parts)], parts[g % len(parts)]
        if role in SWITCH_ROLES:
            switch_xcvr[(fabric, part, role)][w] += n
        else:
            out.node_xcvr[(fabric, part, role.split("/")[1] if "/" in role else role, w)] += n
    keep = np.flatnonzero(z_new & (xz >= 0)[mid])
    kept, x = cp.cls[keep], xz[mid[keep]]
    for g, w, n in _grouped(z_end[kept] * len(parts) + x, cp.z_idx[keep].astype(np.int64)):
        (fabric, role), part = roles[g // len(parts)], parts[g % len(parts)]
        switch_xcvr[(fabric, part, role)][w] += n
    out.switch_xcvr = dict(switch_xcvr)


def _grouped(group: npt.NDArray[np.int64], where: npt.NDArray[np.int64]) -> list[tuple[int, int, int]]:
    """(group, where, links) in order of first appearance."""
    width = int(where.max(initial=0)) + 1
    group *= width
    group += where
    del where           # the Z ends' copy: let go before the count (the tally's peak)
    g, w, n, _first = link_arrays.in_order(group, width)
    return list(zip(g, w, n, strict=True))


def _plug(m: Media, module: Transceiver | None) -> str:
    """What a link's media puts in one of its cages: the module, else the cable's own plug."""
    if module is not None:
        return module.id
    return m.cable.id if m.cable else "unresolved"
