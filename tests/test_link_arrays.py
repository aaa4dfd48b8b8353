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
from validator.derive.link_arrays import Segment, segments, unique
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
