"""Fabric sizing reproduces the NVIDIA DGX SuperPOD reference architectures at every SU count their
tables list (tests/reference/superpod-fabric-tables.csv, each row with its source), and the cabling plan
of every one of them keeps port truth (tests/invariants.py).

How each RA is written as a design, from the RA text (tests/reference/README.md):
- DGX H100 / B200: 32 DGX per SU, 8 x NDR 400G per node, rail-optimized, QM9700 leaves and spines; Table 4
  removes one DGX slot for the whole SuperPOD for UFM, which takes 4 leaf ports.
- DGX B300 XDR: 72 DGX B300 per SU, 8 x 800G XDR (ConnectX-8) per node, Quantum-X800 Q3400 (144 x 800G).
- DGX B300 Spectrum-X: 64 DGX B300 per SU, twin-planar: each ConnectX-8 gives 2 x 400GbE, one per plane;
  SN5600 (64 x 800G OSFP as 128 x 400G).
- DGX GB200: SU = 8 NVL72 racks of 18 compute trays; 4 rails (one per GPU of a tray), a leaf per rack per
  rail, spine-leaf groups of 8 leaves joined by 6 core groups (a declared core tier).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import topology_of, training
from tests.invariants import check_port_truth
from validator.derive.pairs import summarize

TABLES = Path(__file__).resolve().parent / "reference" / "superpod-fabric-tables.csv"
with open(TABLES, newline="", encoding="utf-8") as _fh:
    ROWS = list(csv.DictReader(_fh))


def _pair(switch: str) -> dict[str, Any]:
    return {"leaf": {"switch": switch}, "spine": {"switch": switch}}


def _design(row: dict[str, str]) -> dict[str, Any]:
    family, su = row["family"], int(row["su"])
    tiers: dict[str, Any]
    if family.startswith(("h100", "b200")):
        server = "dgx-h100" if family.startswith("h100") else "dgx-b200"
        fabric: dict[str, Any] = {"type": "infiniband", "speed_gbps": 400, "topology": "rail-optimized",
                                  "scalable_unit": {"servers": 32},
                                  "tiers": _pair("qm9700")}
        if family.endswith("table4"):
            fabric["extra_endpoints"] = [{"name": "ufm", "count": 1, "ports": 4}]
        compute = {"server": server, "count": int(row["nodes"]), "servers_per_rack": 4}
    elif family == "b300-xdr":
        fabric = {"type": "infiniband", "speed_gbps": 800, "topology": "rail-optimized",
                  "scalable_unit": {"servers": 72}, "tiers": _pair("q3400")}
        compute = {"server": "dgx-b300", "count": int(row["nodes"]), "servers_per_rack": 4}
    elif family == "b300-spectrum-x":
        fabric = {"type": "roce", "speed_gbps": 400, "topology": "rail-optimized", "planes": 2, "plane_of": "port",
                  "scalable_unit": {"servers": 64}, "tiers": _pair("sn5600")}
        compute = {"server": "dgx-b300", "count": int(row["nodes"]), "servers_per_rack": 4}
    else:
        racks = 8 * su
        tiers = {**_pair("qm9700"), "core": {"switch": "qm9700"}}
        tiers["leaf"]["downlinks"] = 18
        fabric = {"type": "infiniband", "speed_gbps": 400, "topology": "rail-optimized",
                  "scalable_unit": {"racks": 8}, "tiers": tiers}
        compute = {"server": "gb200-nvl72-tray", "count": racks * 18, "servers_per_rack": 18}
    return training(compute, fabric)


def _num(text: str) -> int | None:
    return int(text) if text else None


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['family']}-{r['su']}su")
def test_reference_architecture_counts(row):
    topo = topology_of(_design(row))
    fab = topo.fabrics["compute"]
    assert fab.buildable and not [p for p in fab.problems if p.rule != "NET006"], fab.problems
    assert fab.count("leaf") == int(row["leaf"])
    assert fab.count("spine") == int(row["spine"])
    assert fab.count("core") == (_num(row["core"]) or 0)
    summary = summarize(topo, "compute")
    bundles = {(b.a, b.z): b.count for b in summary.bundles}
    node_leaf = bundles.get(("server", "leaf"), 0) + bundles.get(("ufm", "leaf"), 0)
    leaf_spine, spine_core = bundles.get(("leaf", "spine"), 0), bundles.get(("spine", "core"), 0)
    leaf = fab.tier("leaf")
    if row["family"] == "b300-spectrum-x":
        # the RA counts connections per 800G OSFP cage, each carrying two 400GbE links (one per plane)
        assert node_leaf == 2 * int(row["node_leaf"])
        assert topo.servers * fab.links_per_server // 2 == int(row["node_leaf"])   # two links per server cage
        up_cages = len({(s.group, s.cage) for s in leaf.layout.slots[leaf.down_ports:]})
        assert fab.count("leaf") * up_cages == int(row["leaf_spine"])
    else:
        if row["node_leaf"]:
            assert node_leaf == int(row["node_leaf"])
        if row["leaf_spine"]:
            assert leaf_spine == int(row["leaf_spine"])
        if row["spine_core"]:
            assert spine_core == int(row["spine_core"])
    check_port_truth(topo)


def test_three_su_h100_uses_the_next_divisor():
    """24 leaves x 32 uplinks need 12 spines of 64 ports, but 32 is not divisible by 12: the RA uses 16
    (2 links per leaf-spine pair), as the sizing does without being told."""
    row = next(r for r in ROWS if r["family"] == "h100-table4" and r["su"] == "3")
    topo = topology_of(_design(row))
    pairs = check_port_truth(topo)["compute"]
    assert topo.fabrics["compute"].count("spine") == 16
    assert pairs[("leaf", "spine")] == 1      # one link count for every leaf-spine pair...
    summary = summarize(topo, "compute")
    assert {b.count for b in summary.bundles if b.a == "leaf"} == {24 * 32}   # ... 768 links = 24 x 32 = 16 x 48


def test_gb200_spine_leaf_groups_as_the_ra_text_says():
    """RA-11338-001: per SU 4 spine-leaf groups (one per rail) of 8 leaves and 6 spines, 6 core groups."""
    row = next(r for r in ROWS if r["family"] == "gb200" and r["su"] == "4")
    topo = topology_of(_design(row))
    plane = topo.fabrics["compute"].plane
    assert (plane.rails, plane.leaves_per_rail, plane.leaves_per_pod, plane.spines_per_pod) == (4, 8, 8, 6)
    # 18 uplinks per leaf over 6 spines = 3 links each; a spine takes 8 x 3 = 24 down and sends 24 up
    spine = topo.fabrics["compute"].tier("spine")
    assert (spine.down_ports, spine.up_ports) == (24, 24)
    # cores: 16 pods x 24 uplinks of spine j = 384 links per core group / 64 ports = 6 cores, 4 links per pair
    assert plane.cores_per_group == 6



@pytest.mark.parametrize("su", ["8", "16"])
def test_b300_spectrum_x_written_as_one_800g_plane_stays_two_tier(su):
    """The same DGX B300 SuperPOD written as one plane of 8 x 800G ConnectX-8 links per node (not twin-planar):
    an SN5600 has 64 x 800G ports, too few for one spine to reach 128 (8 SU) or 256 (16 SU) leaves at 800G, so
    the leaves' 32 uplink cages run 2 x 400G (8 SU) or 4 x 200G (16 SU) and one spine layer of 128 / 256 ports
    reaches every leaf: two tiers with the RA's leaf and spine counts (RA-11337-001 Table 3), no core. Per leaf
    the 32 uplink cages carry 32 x 800G of bandwidth, as the RA counts connections per cage."""
    row = next(r for r in ROWS if r["family"] == "b300-spectrum-x" and r["su"] == su)
    fabric = {"type": "roce", "speed_gbps": 800, "topology": "rail-optimized", "scalable_unit": {"servers": 64},
              "tiers": _pair("sn5600")}
    topo = topology_of(training({"server": "dgx-b300", "count": int(row["nodes"]), "servers_per_rack": 4}, fabric))
    fab = topo.fabrics["compute"]
    assert fab.buildable and not fab.problems
    assert (fab.count("leaf"), fab.count("spine"), fab.count("core")) == (int(row["leaf"]), int(row["spine"]), 0)
    leaf = fab.tier("leaf")
    assert leaf is not None and leaf.up_speed_gbps == {"8": 400, "16": 200}[su]
    up_cages = len({(s.group, s.cage) for s in leaf.layout.slots[leaf.down_ports:]})
    assert fab.count("leaf") * up_cages == int(row["leaf_spine"])
    assert topo.servers * fab.links_per_server == int(row["node_leaf"])
    check_port_truth(topo)


def test_gb200_16_su_validates_clean_with_the_published_counts():
    """A 16-SU GB200 SuperPOD (128 NVL72 racks, 2,304 trays, TP 4 inside each tray's GPUs x DP over every
    tray), with its out-of-band network and storage: the RA-11338-001 Table 3 row (512 leaves, 384 spines,
    144 cores; a secondary transcription, see tests/reference/README.md) and no finding of any rule."""
    from validator.pipeline import analyze

    row = next(r for r in ROWS if r["family"] == "gb200" and r["su"] == "16")
    design = _design(row)
    trays = int(row["su"]) * 8 * 18
    design["training"].update({"parallelism": {"tp": 4, "dp": trays}, "global_batch": trays})
    design["fabrics"]["oob"] = {"type": "ethernet", "speed_gbps": 1,
                                "tiers": {"leaf": {"switch": "sn2201"}, "spine": {"switch": "sn4600c"}}}
    design["storage"] = {"type": "parallel-fs", "write_gbytes_s": 2000}
    analysis = analyze(Path("gb200-16su.yaml"), "gb200-16su.yaml", text=yaml.safe_dump(design, sort_keys=False))
    assert analysis.topology is not None
    fab = analysis.topology.fabrics["compute"]
    published = (int(row["leaf"]), int(row["spine"]), int(row["core"]))
    assert published == (512, 384, 144)
    assert (fab.count("leaf"), fab.count("spine"), fab.count("core")) == published
    assert [f"{f.rule} {f.message}" for f in analysis.findings] == []


LOSSLESS = {"switch": {"pfc_priorities": [3], "dscp_to_tc": {"26": 3, "48": 6}, "roce_tc": 3, "cnp_tc": 6,
                       "ecn": {"min_threshold_kb": 150, "max_threshold_kb": 1500, "probability_pct": 100},
                       # no restoration_ms: Cumulus (the SN5600's OS) has no restoration setting (NET013)
                       "pfc_watchdog": {"enabled": True, "detection_ms": 200}},
            "nic": {"pfc_priorities": [3], "roce_dscp": 26, "roce_priority": 3, "cnp_dscp": 48}}


@pytest.mark.parametrize(("su", "planes"), [("8", 2), ("16", 2)])
def test_b300_spectrum_x_validates_clean_as_two_tiers(su, planes):
    """The DGX B300 Spectrum-X SuperPOD at 8 and 16 SU (RA-11337-001 Table 3: 128 / 256 leaves, 64 / 128
    spines, no core), twin-planar (2 x 400GbE per ConnectX-8) as the RA builds it, with lossless RoCE,
    out-of-band network and storage: the published counts and no finding of any rule. (Written as one 800G
    plane it sizes the same, test above, but does not validate clean: a ConnectX-8 runs no 800GbE on one port
    and its 800G is 200G-PAM4, which the SN5600's 100G-lane cages cannot take: NET011.)"""
    from validator.pipeline import analyze

    row = next(r for r in ROWS if r["family"] == "b300-spectrum-x" and r["su"] == su)
    fabric: dict[str, Any] = {"type": "roce", "speed_gbps": 400 if planes == 2 else 800,
                              "topology": "rail-optimized", "scalable_unit": {"servers": 64},
                              "tiers": _pair("sn5600"), "lossless": LOSSLESS}
    if planes == 2:
        fabric.update({"planes": 2, "plane_of": "port"})
    design = training({"server": "dgx-b300", "count": int(row["nodes"]), "servers_per_rack": 4}, fabric)
    design["fabrics"]["oob"] = {"type": "ethernet", "speed_gbps": 1,
                                "tiers": {"leaf": {"switch": "sn2201"}, "spine": {"switch": "sn4600c"}}}
    design["storage"] = {"type": "parallel-fs", "write_gbytes_s": 2000}
    design["site"] = {"rack": {"model": "rack-48u", "power_budget_kw": 60, "cooling": "rear-door",
                               "rear_door": "rdhx-active-75"}}
    analysis = analyze(Path("b300.yaml"), "b300.yaml", text=yaml.safe_dump(design, sort_keys=False))
    assert analysis.topology is not None
    fab = analysis.topology.fabrics["compute"]
    assert (fab.count("leaf"), fab.count("spine"), fab.count("core")) == (int(row["leaf"]), int(row["spine"]), 0)
    assert [f"{f.rule} {f.message}" for f in analysis.findings] == []
