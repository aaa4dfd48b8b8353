"""`clusterplan racks`: rack elevations that agree with the BOM and the published DGX SuperPOD.

- every bundled design: as many racks as the BOM's rack line; the rack units used are the BOM's
  servers, switches and storage nodes times their catalog heights, plus the rack systems and the
  appliances; the racks' power adds up to the BOM's IT power (all of it is in racks: devices, their
  optics, cable ends); the JSON validates against schemas/racks.schema.json;
- generated fabrics (hypothesis): no rack unit holds two devices, the slots of every rack tile it, and
  nothing stands above the rack's height unless rule FAC003 reports that rack;
- the 4-SU DGX H100 SuperPOD design has the RA's rack count and compute-rack contents
  (tests/reference/superpod-h100-racks.csv).
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import topology_of
from tests.helpers import DESIGNS, REFERENCE, ROOT, check_golden, cli
from tests.test_port_truth import fabrics
from validator.check.engine import run_rules
from validator.derive import Derived
from validator.derive.elevation import Elevations, elevations
from validator.pipeline import load_topology

SCHEMA = json.loads((ROOT / "schemas" / "racks.schema.json").read_text())
BUNDLED = sorted(DESIGNS.glob("*.yaml"))
# out-of-band switches built into a rack system, inside its rack units (the catalog's rack_system block):
# DGX GB200 user guide, "9x 1RU NVLink switch trays" and 2 management ToR switches per NVL72 rack
BUILT_IN_PER_GPU_RACK = {"gb200-nvl72-mixtral": 2}


def _bom_ru(derived: Derived) -> int:
    """Rack units of what the BOM lists as standing in racks, from the BOM lines and the catalog."""
    r = derived.topology.resolved
    design = r.design
    ru = 0
    for item in derived.bom.items:
        qty = item.qty - item.spares
        if item.category == "server":
            ru += qty * r.server.rack_units
        elif item.category == "switch":
            switch = r.catalog.find("switch", item.part)
            assert switch is not None and switch.rack_units, item.part
            ru += qty * switch.rack_units
        elif item.category == "storage":
            assert design.storage and design.storage.nodes
            ru += qty * (design.storage.nodes.rack_units or 2)     # the rack plan's 2U when the design gives none
        elif item.category == "cdu":         # an in-rack CDU (one with rack units) stands in a GPU rack
            ru += qty * (r.catalog.facility(item.part).rack_units or 0)
    system = r.server.rack_system
    ru += derived.topology.gpu_racks * (system.extra_rack_units if system else 0)
    # appliances (UFM...) are no BOM line; each stands in 1U (docs/racks.md)
    for name in ("compute", "storage", "inband"):
        fab = getattr(design.fabrics, name)
        ru += sum(e.count for e in fab.extra_endpoints) if fab else 0
    return ru


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_racks_agree_with_the_bom(path: Path) -> None:
    derived = Derived(load_topology(path))
    code, out, _ = cli("racks", str(path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    lines = [i for i in derived.bom.items if i.category == "rack"]     # NVL72 racks: a line in the trays' price
    assert data["racks_total"] == len(data["racks"]) == sum(i.qty - i.spares for i in lines)
    gpu_racks = sum(1 for r in data["racks"] if r["kind"] == "gpu")
    assert gpu_racks == derived.bom.power["gpu_racks"]
    built_in = BUILT_IN_PER_GPU_RACK.get(path.stem, 0) * gpu_racks
    assert data["ru_used_total"] == sum(r["ru_used"] for r in data["racks"]) == _bom_ru(derived) - built_in
    p = derived.bom.power
    # every watt of the BOM's IT power is in a rack; the racks' cable share is per link (whole cables bought)
    cable_slack = sum(i.unit_power_w * (1 - 1 / derived.topology.resolved.catalog.cable(i.part).links_per_cable)
                      for i in derived.bom.items if i.category == "cable" and i.unit_power_w) / 1000
    known = sum(r["power"]["known_kw"] for r in data["racks"])
    assert p["it_kw_known"] - cable_slack - 0.001 * len(data["racks"]) <= known <= p["it_kw_known"] + 0.001 * len(
        data["racks"])
    if all(r["power"]["total_kw"] is not None for r in data["racks"]):
        assert p["it_kw"] is not None and data["power_total_kw"] == pytest.approx(known, abs=0.01)
    else:
        assert data["power_total_kw"] is None
    heaviest_gpu = max(r["power"]["known_kw"] for r in data["racks"] if r["kind"] == "gpu")
    if p["gpu_rack_kw"] is not None:
        assert heaviest_gpu == p["gpu_rack_kw"]


def _check_rack_units(elev: Elevations, fac003: bool) -> None:
    for rack in elev.racks:
        taken: set[int] = set()
        covered = 0
        for s in rack.slots:
            assert s.height >= 1 and s.ru_top - s.ru_bottom + 1 == s.height, (rack.name, s)
            units = set(range(s.ru_bottom, s.ru_top + 1))
            assert not units & taken, f"{rack.name}: rack units {sorted(units & taken)} used twice"
            taken |= units
            covered += s.height
            assert s.beyond_rack == (s.ru_top > rack.rack_units)
            if not fac003:
                assert s.ru_top <= rack.rack_units, f"{rack.name}: {s.device} above the rack"
        assert set(range(1, rack.rack_units + 1)) <= taken      # slots and empty ranges tile the rack
        assert sum(s.height for s in rack.slots if s.kind != "empty") == rack.ru_used
        assert all(s.height == 0 and s.ru_top == s.ru_bottom == 0 for s in rack.inside)


@st.composite
def fabrics_with_oob(draw: st.DrawFn) -> dict[str, Any]:
    design = draw(fabrics())
    compute = design["compute"]
    if not compute["server"].startswith("gb200") and draw(st.booleans()):
        compute["servers_per_rack"] = draw(st.sampled_from([3, 5, 6, 7]))   # 7 x 8U: above a 48U rack (FAC003)
    if draw(st.booleans()):
        design["fabrics"]["oob"] = {"type": "ethernet", "speed_gbps": 1,
                                    "tiers": {"leaf": {"switch": "sn2201"}, "spine": {"switch": "sn4600c"}}}
    return design


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fabrics_with_oob())
def test_no_rack_unit_used_twice_on_random_fabrics(design: dict[str, Any]) -> None:
    topology = topology_of(design)
    derived = Derived(topology)
    fac003 = any(f.rule == "FAC003" for f in run_rules(topology, derived=derived))
    _check_rack_units(elevations(derived), fac003)
    for rack in topology.racks.racks:          # the rack plan itself: units do not overlap
        spans = sorted((u.ru, u.ru + u.height - 1) for u in rack.units if u.height)
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_designs_use_no_rack_unit_twice(path: Path) -> None:
    _check_rack_units(elevations(Derived(load_topology(path))), fac003=False)


def _reference() -> dict[str, float]:
    with open(REFERENCE / "superpod-h100-racks.csv", newline="") as fh:
        return {row["quantity"]: float(row["value"]) for row in csv.DictReader(fh)}


def test_superpod_has_the_ra_racks_and_compute_rack_contents() -> None:
    ra = _reference()
    elev = elevations(Derived(load_topology(DESIGNS / "superpod-h100-4su.yaml")))
    assert elev.racks_total == ra["racks"] == 38
    gpu = [r for r in elev.racks if r.kind == "gpu"]
    per_rack = int(ra["dgx_per_rack"])
    assert len(gpu) == -(-int(ra["nodes"]) // per_rack) == 32           # 127 DGX, 4 per rack
    servers = [[s for s in r.slots if s.kind == "server"] for r in gpu]
    assert sorted(len(s) for s in servers) == [3] + [4] * 31
    for rack_servers in servers:
        assert {(s.model, s.height) for s in rack_servers} == {("dgx-h100", ra["dgx_h100_rack_units"])}
    full = [r for r, s in zip(gpu, servers, strict=True) if len(s) == per_rack]
    for rack in full:   # "power consumption per rack exceeds 40 kW": 4 x 10.2 kW, plus the optics in them
        assert rack.power.devices_kw == per_rack * ra["dgx_h100_max_kw"]
        assert rack.power.total_kw is not None and rack.power.total_kw > ra["rack_power_over_kw"]
        assert rack.power.total_kw <= rack.power.budget_kw and not rack.power.over_budget


def test_nvl72_rack_shows_its_rack_system_parts() -> None:
    """gb200-nvl72-mixtral: per rack 18 compute trays (1U), 9 NVLink switch trays (1U), 8 power shelves
    (1U each: "Each power shelf takes up one rack unit", BCM power shelf integration) and 2 built-in
    management switches in the 9 + 8 + 2 = 19U rack-system block (DGX GB200 user guide; GB300 NVL72 RA
    components): 18 + 19 = 37U, with the 4U in-rack CDU 41U, before the rack's storage leaves."""
    elev = elevations(Derived(load_topology(DESIGNS / "gb200-nvl72-mixtral.yaml")))
    rack = next(r for r in elev.racks if r.kind == "gpu")
    roles = [s.role for s in rack.slots]
    assert roles.count("server") == 18 and roles.count("nvlink-switch-tray") == 9
    assert roles.count("power-shelf") == 8 and not rack.inside
    assert sum(1 for s in rack.slots if s.fabric == "oob") == 2
    # and the in-rack CDU (cdu-in-rack-200, 4U in the catalog) of each rack (racks_per_cdu: 1)
    assert [(s.model, s.height) for s in rack.slots if s.kind == "cdu"] == [("cdu-in-rack-200", 4)]
    assert sum(s.height for s in rack.slots if s.kind != "empty" and s.fabric != "storage") == 18 + 19 + 4
    assert rack.cooling.type == "liquid" and rack.cooling.cdu == "cdu-in-rack-200" and rack.cooling.cdu_rack_units == 4
    assert rack.weight_kg is None      # the compute trays' weight is not in the catalog: unknown, not zero


def test_racks_cli_formats_and_golden(tmp_path: Path) -> None:
    design = str(DESIGNS / "superpod-h100-4su.yaml")
    code, text, _ = cli("racks", design)
    assert code == 0
    check_golden("racks/superpod-h100-4su.text", text)
    assert "racks R01-01..R01-04, R01-06..R02-04" in text and "identical (31), shown once" in text
    out = tmp_path / "racks.csv"
    assert cli("racks", design, "--format", "csv", "-o", str(out))[0] == 0
    rows = list(csv.DictReader(out.open()))
    assert {r["rack"] for r in rows} == {r.name for r in elevations(Derived(load_topology(Path(design)))).racks}
    assert cli("racks", design, "--format", "json") == cli("racks", design, "--format", "json")   # deterministic


def test_schema_command_writes_the_racks_schema() -> None:
    code, out, _ = cli("schema", "racks")
    assert code == 0 and json.loads(out) == SCHEMA
