"""The link plan as arrays (validator/derive/link_arrays.py, what the cage plan of a million-GPU design walks)
is the link plan: the same links in the same order as `link_tuples`, on every example design and on
generated sites with planes, pods and management zones; and the cage plan's link summary (bundles, the
busiest switch) is the one the pairs give (validator/derive/pairs.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.generate import write_site
from tests.helpers import DESIGNS
from validator.derive.cabling import Plan
from validator.derive.link_arrays import Segment, cage_groups, first_ends, segments, unique
from validator.derive.links import link_tuples
from validator.derive.pairs import summarize
from validator.pipeline import load_topology

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))


def _check(topology) -> None:
    for fabric in topology.fabrics:
        walked = []
        for seg in segments(topology, fabric):
            walked.extend(seg.tuples() if isinstance(seg, Segment) else seg)
        assert walked == list(link_tuples(topology, fabric)), fabric
    summaries = Plan(topology).cage_plan.summaries
    for fabric in topology.fabrics:
        assert summaries[fabric] == summarize(topology, fabric), fabric


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_link_arrays_are_the_link_plan(path):
    _check(load_topology(path, path.name))


@pytest.mark.parametrize("gpus", [1024, 10240])
def test_link_arrays_of_a_site_with_planes_and_zones(tmp_path, gpus):
    path = write_site(tmp_path, gpus)
    _check(load_topology(path, path.name))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 40), max_size=60), st.integers(-(2 ** 40), 2 ** 40), st.integers(1, 1 << 20),
       st.sampled_from([np.int32, np.int64]))
def test_unique_is_numpys_unique(values, shift, spread, dtype):
    """`link_arrays.unique` (runs of equal neighbours, then a table over the keys' span or a sort when it is
    wide) answers what `np.unique` answers: keys in order, the first position and count of each, the inverse."""
    if dtype is np.int32:
        shift, spread = shift % 1000, min(spread, 1000)
    key = np.array([shift + v * spread for v in values], dtype=dtype)
    uniq, first, counts, inverse = unique(key, inverse=True)
    want, w_first, w_inverse, w_counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    assert uniq.dtype == key.dtype
    assert uniq.tolist() == want.tolist()
    assert first.tolist() == w_first.tolist()
    assert counts.tolist() == w_counts.tolist()
    assert inverse is not None and inverse.tolist() == w_inverse.ravel().tolist()


LINKS = st.integers(1, 12).flatmap(lambda size: st.tuples(
    st.just(size), st.lists(st.tuples(st.integers(0, size - 1), st.integers(0, size - 1), st.integers(0, 3)),
                            min_size=1, max_size=40)))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(LINKS)
def test_cage_groups_name_each_group_by_its_least_cage(case):
    """Every cage's group is the least cage joined to it through links (a union-find walk, link by link)."""
    size, links = case
    a = np.array([x for x, _, _ in links], dtype=np.int32)
    z = np.array([y for _, y, _ in links], dtype=np.int32)
    parent = list(range(size))

    def root(c: int) -> int:
        while parent[c] != c:
            c = parent[c]
        return c
    for x, y, _ in links:
        rx, ry = root(x), root(y)
        parent[max(rx, ry)] = min(rx, ry)
    want = [min(c for c in range(size) if root(c) == root(k)) for k in range(size)]
    assert cage_groups(a, z, size).tolist() == want


@settings(max_examples=150, deadline=None, derandomize=True)
@given(LINKS, st.lists(st.integers(0, 2), min_size=4, max_size=4), st.lists(st.integers(0, 2), min_size=4,
                                                                               max_size=4))
def test_first_ends_are_a_walk_of_the_ends(case, a_parts, z_parts):
    """`first_ends` is the walk A end then Z end of link 0, 1, ...: the first end to reach a cage puts its part in
    it, a later end whose part differs from its cage's names its link, the cages holding a part are counted."""
    size, links = case
    part: dict[int, int] = {}
    a_new, z_new, clash = [], [], []
    for k, (x, y, m) in enumerate(links):
        for cage, want, new in ((x, a_parts[m], a_new), (y, z_parts[m], z_new)):
            new.append(cage not in part)
            found = part.setdefault(cage, want)
            if found != want and (not clash or clash[-1] != k):
                clash.append(k)
    got = first_ends(np.array([x for x, _, _ in links], dtype=np.int32), np.array([y for _, y, _ in links],
                     dtype=np.int32), size, np.array([m for _, _, m in links], dtype=np.int32),
                     np.array(a_parts, dtype=np.int32), np.array(z_parts, dtype=np.int32))
    assert got[0].tolist() == a_new
    assert got[1].tolist() == z_new
    assert got[2].tolist() == clash
    assert got[3] == len(part)
