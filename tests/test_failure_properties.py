"""Failure accounting on random fabrics (the port-truth strategy of tests/test_port_truth.py): a failed
switch loses exactly the links the link plan gives it, no figure exceeds the design, and the device DOT
uses every port once."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, assume, given, settings

from tests.builders import topology_of
from tests.test_port_truth import fabrics
from validator.derive import Derived
from validator.derive.failures import analyze_failures
from validator.derive.failures.graph import fabric_graph
from validator.derive.failures.impact import Failure, fabric_impact
from validator.derive.links import link_tuples
from validator.emit.topology_dot import DeviceGraph

SWITCH_ROLES = ("leaf", "spine", "core")


@settings(max_examples=20, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fabrics())
def test_failure_accounting_on_random_fabrics(design: dict[str, Any]) -> None:
    topo = topology_of(design)
    assume(topo.fabrics["compute"].buildable and topo.servers <= 120)
    degree: Counter[tuple[str, int]] = Counter()
    for a_role, a, _ap, z_role, z, _zp, _s in link_tuples(topo, "compute"):
        if a_role in SWITCH_ROLES:
            degree[(a_role, a)] += 1
        degree[(z_role, z)] += 1
    g = fabric_graph(topo, "compute")
    for role in SWITCH_ROLES:
        members = sorted(i for r, i in degree if r == role)
        for i in members[:2] + members[-1:]:
            impact = fabric_impact(g, Failure(switches=frozenset({("compute", role, i)})))
            assert sum(impact.links_lost.values()) == degree[(role, i)]
            assert 0.0 <= impact.path_share <= 1.0
    result = analyze_failures(topo, Derived(topo))
    for c in result.classes:
        assert (c.gpus_unreachable or 0) + (c.gpus_without_nic or 0) <= topo.gpus
        assert all(0 < b.links_lost <= b.links for b in c.bandwidth)
        if c.training is not None:
            assert 0 <= c.training.dp_after <= c.training.dp
    ends: Counter[tuple[str, str]] = Counter()
    for _f, a, ap, z, zp, _s in DeviceGraph(topo).links():
        ends[(a, ap)] += 1
        ends[(z, zp)] += 1
    assert max(ends.values(), default=1) == 1
