"""Power per rack (validator.derive.rack_power): the BOM, FAC001 and `clusterplan racks` read the same figure.

Summed over racks it is the BOM's IT power line by line (servers, switches, storage, transceivers; cables
up to the rounding to whole cables), worked out here from the BOM's own lines; each network rack stays
within the power the rack plan packed it to (device power plus the optics allowance); FAC001 fires on a
rack whose power, optics included, exceeds the budget, and not at the budget exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import DESIGNS, FIXTURES, ROOT, rel
from tests.test_serving_rules import expected
from validator.derive import Derived
from validator.pipeline import analyze, load_topology

DESIGN_FILES = sorted([*DESIGNS.glob("*.yaml"), *(FIXTURES / "valid").glob("*.yaml")])
IN_RACK = ("server", "switch", "storage", "transceiver")


def _bom_watts(derived: Derived, categories: tuple[str, ...]) -> float:
    """W of the BOM lines of some categories, before spares, at the line's basis (included lines add nothing)."""
    total = 0.0
    for item in derived.bom.items:
        if item.category in categories and item.power_basis in ("max", "typical", "design"):
            assert item.unit_power_w is not None
            total += item.unit_power_w * (item.qty - item.spares)
    return total


@pytest.mark.parametrize("path", DESIGN_FILES, ids=lambda p: Path(p).stem)
def test_racks_add_up_to_the_bom_it_power(path: Path) -> None:
    derived = Derived(load_topology(path))
    loads = derived.rack_power.loads
    assert len(loads) == derived.bom.power["gpu_racks"] + derived.bom.power["network_racks"]
    devices_and_optics = sum(r.devices_w + r.optics_w for r in loads)
    assert devices_and_optics == pytest.approx(_bom_watts(derived, IN_RACK), abs=1e-6)
    # a cable line buys whole cables: ceil(links / links per cable); the racks carry each link's share
    catalog = derived.topology.resolved.catalog
    slack = sum(i.unit_power_w * (1 - 1 / catalog.cable(i.part).links_per_cable)
                for i in derived.bom.items if i.category == "cable" and i.unit_power_w)
    cables = sum(r.cables_w for r in loads)
    assert _bom_watts(derived, ("cable",)) - slack - 1e-6 <= cables <= _bom_watts(derived, ("cable",)) + 1e-6
    if derived.bom.power["it_kw"] is None:
        assert any(r.unknown for r in loads)


def test_an_appliance_of_unknown_power_makes_its_rack_unknown_not_zero() -> None:
    derived = Derived(load_topology(DESIGNS / "superpod-h100-4su.yaml"))
    unknown = [r for r in derived.rack_power.loads if r.unknown]
    assert [sorted(r.unknown) for r in unknown] == [["compute-ufm (appliance)"]]
    assert unknown[0].total_w is None and unknown[0].known_w > 0
    assert derived.bom.power["network_rack_kw"] is None      # the heaviest network rack may be that one


@pytest.mark.parametrize("path", DESIGN_FILES, ids=lambda p: Path(p).stem)
def test_network_racks_stay_within_what_they_were_packed_to(path: Path) -> None:
    """The rack plan fills a network rack's budget with device power plus the optics allowance; the optics
    and cable ends the media choice then puts there never exceed it."""
    topology = load_topology(path)
    loads = Derived(topology).rack_power
    for rack in topology.racks.racks:
        if rack.kind == "network":
            assert loads[rack.index].known_w <= rack.packed_w + 1e-6, rack.index


def test_gpu_rack_power_counts_servers_and_their_optics() -> None:
    """small-training: 4 DGX H100 at 10.2 kW (catalog max, DGX H100 user guide) per rack, each with 4 OSFP
    cages holding a 15 W twin-port flat-top module (MMA4Z00-NS-FLT) for 8 compute links; out-of-band on
    passive Cat6: 4 x 10,200 + 16 x 15 = 41,040 W."""
    derived = Derived(load_topology(FIXTURES / "valid" / "small-training.yaml"))
    assert derived.rack_power.kw("gpu") == 41.04
    assert derived.bom.power["gpu_rack_kw"] == 41.04


CASES = sorted(p for p in (ROOT / "tests" / "rules" / "FAC001").glob("*.yaml") if p.name != "branches.yaml")


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rack_power_rule_cases(path: Path) -> None:
    findings = analyze(path, rel(path)).findings
    assert sorted((f.rule, f.severity, f.line) for f in findings) == sorted(expected(path)), \
        [f"{f.rule} {f.line} {f.message}" for f in findings]


def test_rack_power_has_its_three_cases() -> None:
    assert {p.stem for p in CASES} == {"pass", "fail", "boundary"}


def test_a_network_rack_over_budget_is_reported_on_the_budget(tmp_path: Path) -> None:
    """A storage node the design says draws 50 kW cannot stand in a 44 kW rack, whatever the packing: FAC001
    names that network rack (50 kW of the node, plus its optics) and points at the budget, not the servers."""
    src = (DESIGNS / "superpod-h100-4su.yaml").read_text()
    path = tmp_path / "d.yaml"
    path.write_text(src.replace("power_w: 2000, price_usd", "power_w: 50000, price_usd"))
    findings = [f for f in analyze(path, "d.yaml").findings if f.rule == "FAC001"]
    assert len(findings) == 1 and findings[0].path == "site.rack.power_budget_kw"
    assert findings[0].message.startswith("network rack ") and "> 44 kW budget; 16 racks over the budget" in \
        findings[0].message
