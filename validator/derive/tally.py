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
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from validator.derive.links import link_tuples
from validator.derive.media import KINDS, Cage, Media, Shape
from validator.derive.pairs import LinkSummary, summarize
from validator.expand.topology import SWITCH_ROLES
from validator.resolve.catalog.entries import Transceiver

if TYPE_CHECKING:
    from validator.derive.cabling import Plan

# a class of links: what the media choice depends on besides the cages' group
# (fabric, a_role, z_role, a_rack, z_rack, speed, a_lanes, z_lanes, a_form, z_form)
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

    Held as arrays, one entry per link (cage ids, device indices, link class, chosen media) and per cage
    (group root, lanes used, peer): a 100k-GPU design's half-million links stay a few megabytes."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.a, self.z = array("i"), array("i")
        self.a_idx, self.z_idx = array("i"), array("i")
        self.cls = array("i")
        self.classes: list[LinkClass] = []
        self.lengths: list[float] = []
        self.medias: list[Media] = []
        self.mid = array("i")
        self._walk()
        size = plan.cages.size
        self.used = array("i", bytes(4 * size))
        self.peer = array("i", [-1]) * size
        self.multi = bytearray(size)
        self.parent = array("i", range(size))
        self._join_all()
        # a root is the least cage of its group and every parent is less than its child (see _join_all), so
        # one pass in increasing order finds every root
        root = self.root = array("i", self.parent)
        for x in range(size):
            root[x] = root[root[x]]
        self.need = array("d", bytes(8 * size))
        for a, c in zip(self.a, self.cls, strict=True):
            r = self.root[a]
            if self.lengths[c] > self.need[r]:
                self.need[r] = self.lengths[c]
        self.floor = bytearray(size)
        self._settle()

    def _walk(self) -> None:
        plan, index = self.plan, self.plan.cages
        intern: dict[LinkClass, int] = {}
        a_arr, z_arr, ai_arr, zi_arr, cls_arr = self.a, self.z, self.a_idx, self.z_idx, self.cls
        for fabric in plan.topology.fabrics:
            racks = plan.rack_lists(fabric)
            ends: dict[str, tuple[Callable[[int, int | str], tuple[int, int, Cage]], list[int], bool]] = {}
            for a_role, a_i, a_port, z_role, z_i, z_port, speed in link_tuples(plan.topology, fabric):
                a_end = ends.get(a_role)
                if a_end is None:
                    a_end = ends[a_role] = (index.resolver(fabric, a_role), racks(a_role),
                                            index.block(fabric, a_role).node)
                z_end = ends.get(z_role)
                if z_end is None:
                    z_end = ends[z_role] = (index.resolver(fabric, z_role), racks(z_role), False)
                a, a_lanes, a_form = a_end[0](a_i, a_port)
                z, z_lanes, z_form = z_end[0](z_i, z_port)
                if a_end[2] and not a_form[0]:   # an adapter of unknown type: the switch's family, flat if OSFP
                    a_form = (z_form[0], "flat" if z_form[0].startswith("OSFP") else None)
                key = (fabric, a_role, z_role, a_end[1][a_i], z_end[1][z_i], speed, a_lanes, z_lanes, a_form, z_form)
                c = intern.get(key)
                if c is None:
                    c = intern[key] = len(self.classes)
                    self.classes.append(key)
                    self.lengths.append(plan.layout.distance_m(key[3], key[4]))
                a_arr.append(a)
                z_arr.append(z)
                ai_arr.append(a_i)
                zi_arr.append(z_i)
                cls_arr.append(c)

    def _join_all(self) -> None:
        """Count the lanes used in every cage, note whether they go to more than one peer cage, and join the
        two cages of every link into one group (the hot loop: locals only)."""
        used, peer, multi, parent = self.used, self.peer, self.multi, self.parent
        for a, z in zip(self.a, self.z, strict=True):
            used[a] += 1
            used[z] += 1
            pa, pz = peer[a], peer[z]
            if pa == -1:
                peer[a] = z
            elif pa != z:
                multi[a] = 1
            if pz == -1:
                peer[z] = a
            elif pz != a:
                multi[z] = 1
            while parent[a] != a:           # path halving; a group's root is its least cage
                parent[a] = parent[parent[a]]
                a = parent[a]
            while parent[z] != z:
                parent[z] = parent[parent[z]]
                z = parent[z]
            if a < z:
                parent[z] = a
            elif z < a:
                parent[a] = z

    def shape(self, a: int, z: int) -> Shape:
        return self.used[a], self.used[z], not self.multi[a], not self.multi[z]

    def media(self, k: int) -> Media:
        """The media of link k (the same object for every link with the same choice)."""
        return self.medias[self.mid[k]]

    def _settle(self) -> None:
        """Raise each group's floor to the highest kind any of its links takes, until none takes more; then
        keep each link's choice (an index into `medias`)."""
        chosen: dict[tuple[int, int, float, Shape], tuple[int, int]] = {}
        known: dict[int, int] = {}
        a_arr, z_arr, cls_arr, root, floor, need = self.a, self.z, self.cls, self.root, self.floor, self.need
        changed = True
        while changed:
            changed = False
            mids = array("i")
            used, multi = self.used, self.multi
            for a, z, c in zip(a_arr, z_arr, cls_arr, strict=True):
                r = root[a]
                key = (c, floor[r], need[r], (used[a], used[z], not multi[a], not multi[z]))
                found = chosen.get(key)
                if found is None:
                    m = self.plan.choose(self.classes[c], key[1], key[2], key[3])
                    mid = known.get(id(m))
                    if mid is None:
                        mid = known[id(m)] = len(self.medias)
                        self.medias.append(m)
                    found = chosen[key] = (mid, KINDS.index(m.kind) if m.kind in KINDS else -1)
                if found[1] > floor[r]:
                    floor[r] = found[1]
                    changed = True
                mids.append(found[0])
            self.mid = mids


def build_tally(plan: Plan) -> Tally:
    """Modules per cage, cables per link or per joined cages, and the problems, over every link."""
    cp = plan.cage_plan
    out = Tally()
    # what each (class, media) pair adds, worked out once; then per link only integer work
    seen: Counter[tuple[int, int]] = Counter()          # (class, media) -> links
    content: dict[int, str] = {}                        # cage -> the part it holds
    a_mods: Counter[tuple[int, int, int]] = Counter()   # (class, media, A device or rack) -> modules
    z_mods: Counter[tuple[int, int, int]] = Counter()   # (class, media, Z switch) -> modules
    bought: Counter[tuple[int, int]] = Counter()        # (class, media) -> whole cables
    conflicts: list[int] = []
    medias, classes = cp.medias, cp.classes
    per_cable = [m.cable.links_per_cable if m.cable else 1 for m in medias]
    split = [bool(m.cable and m.cable.split) for m in medias]
    a_part = [_plug(m, m.a_transceiver) for m in medias]
    z_part = [_plug(m, m.z_transceiver) for m in medias]
    a_switch = [cls[1] in SWITCH_ROLES for cls in classes]
    a_idx, z_idx = cp.a_idx, cp.z_idx
    for k, (a, z, c, mid) in enumerate(zip(cp.a, cp.z, cp.cls, cp.mid, strict=True)):
        pair = (c, mid)
        seen[pair] += 1
        a_new, z_new = _put(content, a, a_part[mid]), _put(content, z, z_part[mid])
        if a_new is None or z_new is None:       # never by construction: say so rather than count twice
            conflicts.append(k)
        if per_cable[mid] == 1 or (z_new if split[mid] else a_new):
            bought[pair] += 1
        if a_new:
            a_mods[(c, mid, a_idx[k] if a_switch[c] else classes[c][3])] += 1
        if z_new:
            z_mods[(c, mid, z_idx[k])] += 1
    _fill(plan, out, seen, a_mods, z_mods, bought)
    for k in conflicts:
        cls = classes[cp.cls[k]]
        out.problems.setdefault((cls[0], "switches" if cls[1] in SWITCH_ROLES else "servers", "cage"),
                                (cls[1], cp.a_idx[k], cls[2], cp.z_idx[k], cp.media(k), cp.lengths[cp.cls[k]]))
    out.links = len(cp.a)
    out.cages = len(content)
    out.summaries = {fabric: summarize(plan.topology, fabric) for fabric in plan.topology.fabrics}
    return out


def _fill(plan: Plan, out: Tally, seen: Counter[tuple[int, int]], a_mods: Counter[tuple[int, int, int]],
          z_mods: Counter[tuple[int, int, int]], bought: Counter[tuple[int, int]]) -> None:
    """Turn the per-(class, media) counts into the tally's part counts and problems."""
    cp = plan.cage_plan
    switch_xcvr: dict[tuple[str, str, str], Counter[int]] = defaultdict(Counter)
    for (c, mid), links in seen.items():
        fabric, a_role, z_role, a_rack, z_rack, speed = cp.classes[c][:6]
        m, length = cp.medias[mid], cp.lengths[c]
        part = m.cable.id if m.cable else f"UNRESOLVED-{speed:g}G"
        out.cable_runs[(fabric, part, m.length_m, a_rack, z_rack)] += links
        first = next(k for k in range(len(cp.a)) if cp.cls[k] == c and cp.mid[k] == mid) \
            if _problem(m, a_rack, z_rack, length) else -1
        if first >= 0:
            plan.check(out, fabric, a_role, cp.a_idx[first], z_role, cp.z_idx[first], a_rack, z_rack, m, length)
    for (c, mid), n in bought.items():
        fabric, m = cp.classes[c][0], cp.medias[mid]
        out.cables_bought[(fabric, m.cable.id if m.cable else f"UNRESOLVED-{cp.classes[c][5]:g}G", m.length_m)] += n
    for (c, mid, where), n in a_mods.items():
        fabric, a_role = cp.classes[c][:2]
        x = cp.medias[mid].a_transceiver
        if x is None:
            continue
        if a_role in SWITCH_ROLES:
            switch_xcvr[(fabric, x.id, a_role)][where] += n
        else:
            role = a_role.split("/")[1] if "/" in a_role else a_role
            out.node_xcvr[(fabric, x.id, role, where)] += n
    for (c, mid, where), n in z_mods.items():
        x = cp.medias[mid].z_transceiver
        if x is not None:
            switch_xcvr[(cp.classes[c][0], x.id, cp.classes[c][2])][where] += n
    out.switch_xcvr = dict(switch_xcvr)


def _problem(m: Media, a_rack: int, z_rack: int, length: float) -> bool:
    """Whether Plan.check would record something for this media (unresolved, copper between racks, short)."""
    return m.kind == "unresolved" or (m.copper and m.kind != "cat6" and a_rack != z_rack) or m.reach_m < length


def _plug(m: Media, module: Transceiver | None) -> str:
    """What a link's media puts in one of its cages: the module, else the cable's own plug."""
    if module is not None:
        return module.id
    return m.cable.id if m.cable else "unresolved"


def _put(content: dict[int, str], cage: int, part: str) -> bool | None:
    """Put a part in a cage: True when the cage was empty, False when it already holds that part, None when
    it holds another one (two modules in one cage)."""
    held = content.get(cage)
    if held is None:
        content[cage] = part
        return True
    return False if held == part else None
