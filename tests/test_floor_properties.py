"""Property test of the floor plan over generated designs (issue 25): several halls, network racks on
air, switches with two management ports, partial scalable units, out-of-band zones. For every design:
every management port is cabled once, every rack is within its power, cooling and rack units or a rule
says it is not, and every link the placement makes is within its media's reach or NET005 says so."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import training
from tests.test_floor import OOB, topology_with
from validator.base.tables import thresholds
from validator.check.engine import run_rules
from validator.derive import Derived
from validator.derive.links import iter_links

TWO_MGMT = {"qm9700-2m": {"from": "qm9700", "mgmt_ports": 2}, "sn5600-2m": {"from": "sn5600", "mgmt_ports": 2}}


@st.composite
def floor_designs(draw: st.DrawFn) -> dict[str, Any]:
    nvl = draw(st.booleans())
    per_rack = 18 if nvl else draw(st.sampled_from([2, 4]))
    count = draw(st.integers(1, 5)) * 18 if nvl else draw(st.integers(3, 72))
    ib = draw(st.booleans())
    leaf, spine = ("qm9700", "qm9700-2m") if ib else ("sn5600", "sn5600-2m")
    fabric: dict[str, Any] = {"type": "infiniband" if ib else "ethernet", "speed_gbps": 400,
                              "topology": "rail-optimized",
                              "tiers": {"leaf": {"switch": leaf, "placement": draw(st.sampled_from(["rack", "row"]))},
                                        "spine": {"switch": spine}}}
    if nvl:
        fabric["tiers"]["leaf"]["downlinks"] = 18
        fabric["scalable_unit"] = {"racks": draw(st.integers(1, 3))}
    else:
        fabric["scalable_unit"] = {"servers": draw(st.sampled_from([8, 16, 32]))}   # partial units too
    oob = {**OOB, "tiers": {k: v for k, v in OOB["tiers"].items() if k != "core"}}
    if draw(st.booleans()):
        oob = {**OOB, "zones": {"racks": draw(st.integers(1, 4))}}
    design = training({"server": "gb200-nvl72-tray" if nvl else "dgx-h100", "count": count,
                       "servers_per_rack": per_rack}, fabric, fabrics={"oob": oob})
    cooling = "liquid" if nvl else draw(st.sampled_from(["air", "rear-door"]))
    rack: dict[str, Any] = {"model": "rack-48u", "power_budget_kw": draw(st.sampled_from([30, 45, 60, 132])),
                            "cooling": cooling}
    rack.update({"cdu": "cdu-row-2500"} if nvl else {"rear_door": "rdhx-active-75"} if cooling == "rear-door" else {})
    design["site"] = {"rack": rack, "layout": {"racks_per_row": draw(st.integers(2, 5)),
                                               "rows_per_hall": draw(st.integers(1, 2))}}
    return design


@settings(max_examples=20, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(floor_designs())
def test_every_rack_link_and_management_port_is_within_its_limits_or_flagged(design: dict[str, Any]) -> None:
    topology = topology_with(design, {k: dict(v) for k, v in TWO_MGMT.items()})
    derived = Derived(topology)
    rules = {f.rule for f in run_rules(topology, derived)}
    assert topology.fabrics["oob"].buildable
    links = list(iter_links(topology, "oob"))
    ends = Counter(end for link in links for end in ((link.a_device, link.a_port), (link.z_device, link.z_port)))
    assert max(ends.values()) == 1
    spine_ports = Counter(link.a_port for link in links if link.a_role == "compute/spine")
    assert spine_ports["mgmt1"] == spine_ports["mgmt2"] == topology.fabrics["compute"].count("spine")
    site = topology.resolved.design.site.rack
    air = thresholds()["air_cooling_max_kw"].value
    plan = topology.racks
    for rack, load in zip(plan.racks, derived.rack_power.loads, strict=True):
        kw = load.known_w / 1000
        assert kw <= site.power_budget_kw + 1e-9 or "FAC001" in rules
        assert rack.ru_used <= plan.rack_units or "FAC003" in rules
        cooled = rack.cooling(topology.fabrics, str(site.cooling))
        if cooled == "air" and kw > air + 1e-9:
            assert ("FAC002" if rack.kind == "gpu" else "FAC005") in rules, (rack.kind, kw)
    reach = [k for k in derived.cabling.tally.problems if k[2] in ("none", "reach", "copper")]
    assert not reach or "NET005" in rules
