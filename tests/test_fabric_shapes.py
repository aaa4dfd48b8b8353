"""The fabric shapes real clusters use, each an example design (designs/) whose sizing is pinned here
against the public description it is modelled on; the expected numbers are the source's, or arithmetic
on the source's figures written out in the test. Every one also keeps port truth (tests/invariants.py)."""

from __future__ import annotations

from collections import Counter

from tests.builders import topology_of, training
from tests.helpers import DESIGNS, FIXTURES
from tests.invariants import check_port_truth
from validator.derive import Derived
from validator.derive.links import link_tuples, server_slots
from validator.pipeline import analyze, load_topology

VALID = FIXTURES / "valid"   # reference-scale designs (24K and 16K GPUs) kept out of designs/ for speed


def test_zones_with_a_taper_meta_llama3():
    """Llama 3 paper (arXiv 2407.21783) section 3.3.1: 16 GPUs (2 servers) per rack on one ToR, 192 racks per
    pod at full bisection = 3,072 GPUs, 8 pods = 24,576 GPUs, aggregation oversubscribed 1:7."""
    topo = load_topology(VALID / "meta-llama3-roce-zones.yaml")
    fab = topo.fabrics["compute"]
    plane = fab.plane
    assert topo.gpus == 8 * 3072 == 24576
    assert topo.gpu_racks == 3072 // 2 == 1536
    leaf, spine, core = fab.tiers
    assert fab.count("leaf") == 1536                       # one top-of-rack switch per rack
    assert (leaf.down_ports, leaf.up_ports) == (16, 16)     # 2 servers x 8 x 400G down, non-blocking up
    assert plane.leaves_per_pod == 192 and plane.pods == 8  # 192 racks per zone, 8 zones
    # the zone's spines: 192 leaves x 16 uplinks over a divisor of 16; a 7816R4 chassis has 576 x 800G
    # = 1,152 x 400G ports; at 7:1 it takes at most D with D + ceil(D/7) <= 1152, D = 1008, so 3,072 links
    # need >= 3.05 spines: the divisor 4, each with 192 x 4 = 768 down and ceil(768 / 7) = 110 up
    assert (plane.spines_per_pod, spine.down_ports, spine.up_ports) == (4, 768, 110)
    assert abs(spine.ratio - 768 / 110) < 1e-9 and spine.ratio <= 7
    # core group j joins spine j of the 8 zones: 8 x 110 = 880 links fit one 1,152-port chassis
    assert (plane.cores_per_group, fab.count("core"), core.down_ports) == (1, 4, 880)
    check_port_truth(topo)


def test_top_of_rack_leaves_keep_finned_copper_out_of_flat_nic_cages():
    """The ToR design puts each leaf in its servers' rack. The servers' OSFP cages are flat-top and the leaf's
    finned, and the catalog's twin-port DACs are finned at both ends: no DAC may join them, so the in-rack
    links take a flat twin-port module per server cage (3,072 servers x 4 cages = 12,288) and fiber; network
    racks hold only the switches that do not stand in a GPU rack."""
    derived = Derived(load_topology(VALID / "meta-llama3-roce-zones.yaml"))
    tally = derived.cabling.tally
    assert not {part for (fabric, part, _length) in tally.cables if fabric == "compute" and part.startswith("mcp")}
    server = {part: 0 for (fabric, part, role, _rack) in tally.node_xcvr if fabric == "compute"}
    for (fabric, part, _role, _rack), n in tally.node_xcvr.items():
        if fabric == "compute":
            server[part] += n
    assert server == {"mma4z00-ns-flt": 3072 * 4}
    plan = derived.topology.racks
    network = [r for r in plan.racks if r.kind == "network"]
    # 32 spine and 4 core chassis (no published height: a rack each) + out-of-band aggregation racks
    assert sum(1 for r in network if any(u.role in ("spine", "core") and u.fabric == "compute" for u in r.units)) == 36
    assert all(not any(u.role == "leaf" and u.fabric == "compute" for u in r.units) for r in network)


def test_dual_plane_dual_tor_alibaba_hpn():
    """HPN (Qian et al., SIGCOMM 2024): per segment 136 hosts on 16 ToRs (8 rails x 2 planes), each ToR 136 x
    200G down (128 active + 8 backup) and 60 x 400G up; 60 aggregation switches per plane; 15 segments."""
    topo = load_topology(VALID / "alibaba-hpn-dual-tor.yaml")
    fab = topo.fabrics["compute"]
    leaf, spine = fab.tiers
    assert fab.planes == 2 and fab.plane.rails == 8 and fab.plane.sus == 15
    assert fab.count("leaf") == 15 * 16 == 240
    assert (leaf.down_ports, leaf.up_ports, leaf.up_speed_gbps) == (136, 60, 400)
    # 120 ToRs per plane x 60 uplinks = 7,200 links; 128-port 400G aggregation: the smallest divisor of 60
    # holding them is 60 (7200 / 128 = 56.25), one link from every ToR to every aggregation switch
    assert spine.count == 60 and fab.count("spine") == 120
    # the two ports of every NIC land on two different ToRs, one per plane
    slots = server_slots(topo, "compute")
    assert [p for p, _rail, _ in slots] == [0, 1] * 8
    leaves = {}
    for a_role, a_idx, a_port, _z_role, z_idx, _zp, _s in link_tuples(topo, "compute"):
        if a_role == "server" and a_idx < 2:
            leaves[(a_idx, a_port)] = z_idx
    for s in range(2):
        for nic in range(8):
            assert leaves[(s, 2 * nic + 1)] != leaves[(s, 2 * nic + 2)]
    check_port_truth(topo)


def test_twin_planar_b300_spectrum_x():
    """RA-11337-001 Table 3, 2 SU: 128 nodes, 32 leaves, 16 spines (see also tests/test_fabric_sizing.py)."""
    topo = load_topology(DESIGNS / "b300-spectrum-x-dual-plane.yaml")
    fab = topo.fabrics["compute"]
    assert (topo.servers, fab.count("leaf"), fab.count("spine"), fab.planes) == (128, 32, 16, 2)
    check_port_truth(topo)


def test_eight_planes_deepseek():
    """DeepSeek (Zhao et al., ISCA 2025, arXiv 2505.09343, section 5.1): 8 GPU-NIC pairs per node, each pair
    in its own plane, each plane a two-layer fat-tree of 64-port 400G InfiniBand switches: 64^2 / 2 = 2,048
    endpoints per plane, 16,384 GPUs in all, with 768 switches (the paper's cost table)."""
    design = training({"server": "dgx-h100", "count": 2048, "servers_per_rack": 4},
                      {"type": "infiniband", "speed_gbps": 400, "topology": "fat-tree", "planes": 8,
                       "plane_of": "nic", "tiers": {"leaf": {"switch": "qm9700"}, "spine": {"switch": "qm9700"}}})
    topo = topology_of(design)
    fab = topo.fabrics["compute"]
    assert topo.gpus == 16384 and fab.planes == 8
    assert fab.plane.endpoint_links == 2048                      # 64 x 64 / 2 endpoints per plane
    assert (fab.tier("leaf").count, fab.tier("spine").count) == (64, 32)
    assert fab.switches == 768
    # NIC i of every server is on plane i (a link of plane p never reaches a switch of another plane)
    per_plane = 64
    planes = {z_idx // per_plane for a_role, _a, a_port, _z, z_idx, _zp, _s in link_tuples(topo, "compute")
              if a_role == "server" and a_port == 3}
    assert planes == {2}


def test_rail_only_has_no_spine():
    """Rail-only (Wang et al., arXiv 2307.12169): 8 rails of 128 NICs, each on one 128 x 400G switch; the
    rail-optimized two-tier fabric of the same switches needs 16 leaves + 8 spines = 24, so rail-only uses
    8 / 24 = 1/3 of the switches (the paper claims 38-77 % lower network cost)."""
    topo = load_topology(DESIGNS / "rail-only-h100.yaml")
    fab = topo.fabrics["compute"]
    assert fab.planes == 8 and fab.switches == 8 and len(fab.tiers) == 1
    rail_optimized = topology_of(training({"server": "dgx-h100", "count": 128, "servers_per_rack": 4},
                                          {"type": "roce", "speed_gbps": 400, "topology": "rail-optimized",
                                           "tiers": {"leaf": {"switch": "sonic-th5-64x800"},
                                                     "spine": {"switch": "sonic-th5-64x800"}}}))
    assert rail_optimized.fabrics["compute"].switches == 24
    assert 0.38 <= 1 - 8 / 24 <= 0.77
    findings = analyze(DESIGNS / "rail-only-h100.yaml").findings
    assert [(f.rule, f.waived) for f in findings] == [("NET010", True)]
    check_port_truth(topo)


def test_nvl36x2_domain_spans_two_racks():
    """NVL36x2: 9 compute trays of 4 GPUs per rack, two racks per 72-GPU NVLink domain."""
    analysis = analyze(DESIGNS / "gb200-nvl36x2-inference.yaml")
    topo = analysis.topology
    assert topo is not None
    assert (topo.nvlink_domain_gpus, topo.resolved.nvlink_domain_racks, topo.gpu_racks) == (72, 2, 8)
    assert topo.nvlink_domains == 288 // 72 == 4
    assert not [f for f in analysis.findings if f.rule == "NET004"]
    # the same trays declared one rack per domain fail NET004: 9 x 4 = 36 GPUs per rack < 72
    text = (DESIGNS / "gb200-nvl36x2-inference.yaml").read_text().replace("nvlink_domain_racks: 2",
                                                                         "nvlink_domain_racks: 1")
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one-rack.yaml"
        path.write_text(text)
        assert "NET004" in {f.rule for f in analyze(path).findings if not f.waived}


def test_inference_fleet_without_a_backend_fabric():
    """Replicas that fit in one server need no compute fabric; a 16-GPU replica does (NET009)."""
    analysis = analyze(DESIGNS / "inference-h100-no-backend.yaml")
    assert analysis.topology is not None and "compute" not in analysis.topology.fabrics
    assert [f for f in analysis.findings if not f.waived] == []
    counts = Counter(b.a for b in analysis.facts.summaries["inband"].bundles)
    assert counts == Counter({"server": 1})


def test_rail_groups_gb200_su():
    """GB200 RA (RA-11338-001): an SU is 8 NVL72 racks; 4 rails (one per GPU of a tray); each rail a group
    of 8 leaves, one per rack, each taking the rack's 18 trays: 4 x 8 = 32 leaves."""
    topo = load_topology(DESIGNS / "gb200-nvl72-mixtral.yaml")
    plane = topo.fabrics["compute"].plane
    assert (plane.su_servers, plane.rails, plane.leaves_per_rail, plane.servers_per_leaf) == (144, 4, 8, 18)
    assert topo.fabrics["compute"].count("leaf") == 32
    check_port_truth(topo)
