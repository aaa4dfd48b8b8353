"""Sizing from what is built, over generated designs off the reference path (partial SUs, odd server counts,
several SUs, appliances, two and three tiers; issue 25):

- without growth, no leaf (nor three-tier spine) has more uplinks than its downlinks in use need at its
  taper, rounded up to a multiple of the switches it stripes over (one link more per switch at most), counted
  on the cabling plan;
- two-tier spines are sized to the leaves that exist: no smaller divisor of the uplinks holds them (nor
  reaches the training floor of 4 spines, TRN009);
- declared growth adds exactly the difference: the same leaves and server links, every leaf uplinked for all
  its downlink ports, and the cabling plan's leaf-spine links grow by the sum of the per-leaf differences.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.builders import topology_of, training
from validator.derive.growth import without_growth
from validator.derive.links import link_tuples
from validator.expand.ports import uplinks_for
from validator.expand.topology import Topology

SWITCHES = {"infiniband": ["qm9700"], "roce": ["sonic-th5-64x800", "sn5600"]}


@st.composite
def designs(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["infiniband", "roce"]))
    switch = draw(st.sampled_from(SWITCHES[kind]))
    topology = draw(st.sampled_from(["rail-optimized", "rail-optimized", "fat-tree"]))
    per_rack = draw(st.sampled_from([1, 2, 4]))
    fabric: dict[str, Any] = {"type": kind, "speed_gbps": 400, "topology": topology,
                              "tiers": {"leaf": {"switch": switch}, "spine": {"switch": switch}}}
    if draw(st.integers(0, 5)) == 0:
        fabric["tiers"]["core"] = {"switch": switch}
    if topology == "rail-optimized" and draw(st.booleans()):
        fabric["scalable_unit"] = {"servers": draw(st.sampled_from([8, 16, 24, 32, 48, 100]))}
    if draw(st.booleans()):
        fabric["extra_endpoints"] = [{"name": "ufm", "count": 1, "ports": draw(st.integers(1, 6))}]
    if draw(st.booleans()):
        fabric["growth"] = {"scalable_units": draw(st.integers(1, 6))}
    count = draw(st.integers(1, 330))
    return training({"server": draw(st.sampled_from(["dgx-h100", "dgx-b200"])), "count": count,
                     "servers_per_rack": per_rack}, fabric)


def _per_leaf(topo: Topology) -> tuple[Counter[int], Counter[int], dict[int, set[int]]]:
    """From the cabling plan: downlinks in use and uplinks of each leaf, and the spines each leaf reaches."""
    down: Counter[int] = Counter()
    up: Counter[int] = Counter()
    spines: dict[int, set[int]] = {}
    for a_role, a_idx, _ap, z_role, z_idx, _zp, _s in link_tuples(topo, "compute"):
        if z_role == "leaf":
            down[z_idx] += 1
        elif a_role == "leaf" and z_role == "spine":
            up[a_idx] += 1
            spines.setdefault(a_idx, set()).add(z_idx)
    return down, up, spines


def _per_spine(topo: Topology) -> tuple[Counter[int], Counter[int]]:
    """From the cabling plan: links from leaves into each spine, and from each spine to the cores."""
    down: Counter[int] = Counter()
    up: Counter[int] = Counter()
    for a_role, a_idx, _ap, z_role, z_idx, _zp, _s in link_tuples(topo, "compute"):
        if z_role == "spine":
            down[z_idx] += 1
        elif a_role == "spine":
            up[a_idx] += 1
    return down, up


def _check_as_used(topo: Topology) -> None:
    fab = topo.fabrics["compute"]
    leaf = fab.tier("leaf")
    assert leaf is not None
    down, up, reach = _per_leaf(topo)
    per_pod = fab.plane.spines_per_pod
    for i in range(fab.count("leaf")):
        need = uplinks_for(down[i], leaf.down_speed_gbps, leaf.up_speed_gbps, leaf.taper)
        assert up[i] <= -(-need // per_pod) * per_pod, (i, down[i], up[i], per_pod)
        if up[i]:
            assert up[i] % len(reach[i]) == 0, f"leaf {i} stripes {up[i]} links unevenly over {len(reach[i])}"
    spine = fab.tier("spine")
    if spine is not None and len(fab.tiers) == 3:
        s_down, s_up = _per_spine(topo)
        groups = fab.plane.cores_per_group
        for g in range(fab.count("spine")):
            need = uplinks_for(s_down[g], spine.down_speed_gbps, spine.up_speed_gbps, spine.taper)
            assert s_up[g] <= -(-need // groups) * groups, (g, s_down[g], s_up[g], groups)
    if spine is not None and len(fab.tiers) == 2 and fab.tiers[0].up_ports:
        u, cap = leaf.up_ports, spine.switch.ports_at(leaf.up_speed_gbps)
        floor = min(4, u)
        smaller = [d for d in range(1, fab.plane.spines_per_pod) if u % d == 0 and d * cap >= fab.plane.leaves * u
                   and d >= floor]
        assert not smaller, f"{fab.plane.spines_per_pod} spines where {smaller[0]} hold the leaves that exist"


def _check_growth(topo: Topology) -> None:
    lean = without_growth(topo)
    fab, base = topo.fabrics["compute"], lean.fabrics["compute"]
    assert base.buildable
    assert fab.count("leaf") == base.count("leaf")
    leaf = fab.tier("leaf")
    assert leaf is not None and not fab.plane.partial_ups
    assert leaf.up_ports == uplinks_for(leaf.down_ports, leaf.down_speed_gbps, leaf.up_speed_gbps, leaf.taper)
    down, up, _ = _per_leaf(topo)
    lean_down, lean_up, _ = _per_leaf(lean)
    assert down == lean_down
    assert all(up[i] >= lean_up[i] for i in range(fab.count("leaf")))
    added = sum(up.values()) - sum(lean_up.values())
    assert added == sum(leaf.up_ports - base.plane.leaf_uplinks(i) for i in range(base.count("leaf")))
    assert fab.count("spine") >= base.count("spine")


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(designs())
def test_no_leaf_is_uplinked_beyond_its_use_unless_growth_is_declared(design: dict[str, Any]) -> None:
    topo = topology_of(design)
    fab = topo.fabrics["compute"]
    assume(fab.buildable)
    if "growth" in design["fabrics"]["compute"]:
        _check_growth(topo)
    else:
        _check_as_used(topo)
