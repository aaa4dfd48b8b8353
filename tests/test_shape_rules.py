"""Rules that know the shapes they judge (issue 25): no NET008 where one leaf per rail is reached by every
server or where out-of-band leaves go to the site's router, no NET009/TRN006 on a single-node system without
a compute fabric. Each shape beside the nearest one that must still fail. (The three cases of each rule are
in tests/rules/; these are the further shapes the issue names.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.builders import training
from validator.check.result import Analysis
from validator.pipeline import analyze

TH5 = "sonic-th5-64x800"


def _run(design: dict[str, Any]) -> Analysis:
    return analyze(Path("shape.yaml"), "shape.yaml", text=yaml.safe_dump(design, sort_keys=False))


def _rules(analysis: Analysis) -> set[str]:
    assert analysis.topology is not None, [f.message for f in analysis.findings]
    return {f.rule for f in analysis.findings}


def _no_fabric(servers: int, dp: int) -> dict[str, Any]:
    design = training({"server": "dgx-h100", "count": servers, "servers_per_rack": 4}, {})
    del design["fabrics"]["compute"]
    design["training"]["parallelism"] = {"tp": 8, "dp": dp}
    design["training"]["global_batch"] = dp
    return design


def test_single_node_without_a_compute_fabric_is_not_an_error():
    """One DGX H100 running an 8-GPU job: nothing leaves the server, no fabric is needed."""
    assert not {"NET009", "TRN006"} & _rules(_run(_no_fabric(1, 1)))


def test_two_nodes_without_a_compute_fabric_still_fail():
    """The same job on 2 DGX H100 (TP 8 x DP 2 = 16 GPUs) crosses servers: NET009, and 0 Gb/s per GPU."""
    assert {"NET009", "TRN006"} <= _rules(_run(_no_fabric(2, 2)))


def _leaf_only(servers: int, **fabric: Any) -> dict[str, Any]:
    fab = {"type": "roce", "speed_gbps": 400, "topology": "rail-optimized", "tiers": {"leaf": {"switch": TH5}},
           **fabric}
    return training({"server": "dgx-h100", "count": servers, "servers_per_rack": 4}, fab)


def test_single_rack_rail_design_without_spine_is_connected():
    """4 DGX H100 in one rack, 8 rails of one leaf each (4 of 128 ports): every server reaches every rail."""
    analysis = _run(_leaf_only(4))
    assert analysis.topology is not None and analysis.topology.fabrics["compute"].count("leaf") == 8
    assert "NET008" not in _rules(analysis)


def test_two_leaves_on_one_rail_without_spine_are_islands():
    """200 DGX H100: a spine-less Tomahawk 5 leaf takes 128 servers of a rail, so each rail has 2 leaves
    (16 in all for 8 rails) and nothing joins the two of one rail."""
    analysis = _run(_leaf_only(200))
    assert analysis.topology is not None and analysis.topology.fabrics["compute"].count("leaf") == 16
    assert "NET008" in _rules(analysis)


def test_basepod_two_leaves_with_every_node_on_both():
    """A 4-node DGX BasePOD written as the issue describes it: two QM9700 compute leaves and no spine, each
    DGX H100 sending 4 of its 8 NDR400 links to each leaf (`attachment: dual`): 4 x 4 = 16 of 64 ports used
    on each. (The DGX BasePOD RA, "DGX BasePOD with NDR400 Compute Fabric", Table 1: compute nodes 2-8,
    compute fabric QM9700, "eight compute connections from each node running at NDR400"
    (docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai, Reference
    Architectures). Its switch and cable counts by node count were not in any copy searched (three sessions;
    the sources are listed in tests/test_basepod.py, which holds the whole BasePOD with its published SN4600C
    pair), so the count 2 is the arithmetic here, not a published figure: 4 nodes x 8 links = 32 of one
    QM9700's 64 ports, two leaves for the dual attachment.)
    Every node reaches both leaves, so the fabric is connected through the nodes: no NET008."""
    design = training({"server": "dgx-h100", "count": 4, "servers_per_rack": 4},
                      {"type": "infiniband", "speed_gbps": 400, "attachment": "dual",
                       "tiers": {"leaf": {"switch": "qm9700"}}})
    analysis = _run(design)
    assert analysis.topology is not None
    fab = analysis.topology.fabrics["compute"]
    assert (fab.count("leaf"), fab.count("spine")) == (2, 0)
    assert "NET008" not in _rules(analysis)


def test_two_leaf_oob_to_a_management_router_is_not_an_error():
    """8 DGX H100 in 2 racks and the 8 compute leaves in a network rack, an out-of-band leaf in each of the 3
    racks (BMCs, switch management ports), no spine tier: the leaves are uplinked to the site's management
    router, outside the design."""
    design = _leaf_only(8)
    design["fabrics"]["oob"] = {"type": "ethernet", "speed_gbps": 1,
                                "tiers": {"leaf": {"switch": "sn2201", "placement": "rack"}}}
    analysis = _run(design)
    assert analysis.topology is not None and analysis.topology.fabrics["oob"].count("leaf") == 3
    assert "NET008" not in _rules(analysis)


def test_sweep_row_says_how_many_gpus_idle():
    """A sweep over compute.count: 64 DGX H100 (512 GPUs) running the 256-GPU job show the same tokens/s as 32,
    and the row says why: 256 idle GPUs (TRN011 in the findings); 32 servers leave none idle."""
    from tests.rule_cases import case_path
    from validator.workflows.sweep import row_of

    fail, boundary = case_path("TRN011", "fail"), case_path("TRN011", "boundary")
    big, fit = row_of(analyze(fail, "fail.yaml")), row_of(analyze(boundary, "boundary.yaml"))
    assert (big["gpus"], big["idle_gpus"], fit["gpus"], fit["idle_gpus"]) == (512, 256, 256, 0)
    assert "TRN011" in {f.rule for f in analyze(fail, "fail.yaml").findings}
