"""Fabric sizing reproduces the DGX H100 SuperPOD compute-fabric counts (RA-11333-001 Table 4)."""

from __future__ import annotations

import csv

import pytest

from tests.helpers import SHARED
from validator.pipeline import load_topology

TABLE4 = SHARED / "reference" / "superpod-h100-table4.csv"


def _rows():
    with open(TABLE4, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


DESIGN = """apiVersion: clusterplan/v1
kind: TrainingCluster
metadata: {{name: superpod-{sus}su}}
site:
  rack: {{model: rack-48u, power_budget_kw: 44, cooling: rear-door, rear_door: rdhx-active-75}}
compute: {{server: dgx-h100, count: {nodes}, servers_per_rack: 4}}
fabrics:
  compute:
    type: infiniband
    speed_gbps: 400
    topology: rail-optimized
    scalable_unit_servers: 32
    {planned}
    extra_endpoints: [{{name: ufm, count: 1, ports: 4}}]
    tiers:
      leaf: {{switch: qm9700}}
      spine: {{switch: qm9700}}
training:
  model: llama3-8b
  parallelism: {{tp: 8, dp: {nodes}}}
  sequence_length: 8192
  global_batch: {nodes}
"""


def superpod_design(tmp_path, sus: int, nodes: int):
    planned = "planned_scalable_units: 4" if sus == 3 else ""
    path = tmp_path / f"superpod-{sus}su.yaml"
    path.write_text(DESIGN.format(sus=sus, nodes=nodes, planned=planned))
    return path


@pytest.mark.parametrize("row", _rows(), ids=lambda r: f"{r['SUs']}SU")
def test_table4_row(tmp_path, row):
    sus, nodes = int(row["SUs"]), int(row["nodes"])
    topo = load_topology(superpod_design(tmp_path, sus, nodes))
    fab = topo.fabrics["compute"]
    cables = dict(item.split("=") for item in row["cables"].split(";"))
    assert topo.servers == nodes
    assert topo.gpus == int(row["GPUs"])
    assert fab.tier("leaf").count == int(row["leaf"])
    assert fab.tier("spine").count == int(row["spine"])
    assert fab.tier("core") is None
    node_and_ufm = sum(b.count for b in fab.bundles if b.z == "leaf")
    spine_leaf = sum(b.count for b in fab.bundles if b.a == "leaf" and b.z == "spine")
    assert node_and_ufm == int(cables["compute_and_UFM"])
    assert spine_leaf == int(cables["spine_leaf"])


def test_expanded_links_match_the_counts(tmp_path):
    from validator.expand.topology import iter_links

    topo = load_topology(superpod_design(tmp_path, 2, 63))
    links = list(iter_links(topo, "compute"))
    assert len(links) == 508 + 512
    # rail alignment: NIC i of every server lands on a rail-i leaf of its SU
    for link in links:
        if link.a_role == "server":
            assert link.z_device.endswith(f"-rail{link.a_port}")
            su = (int(link.a_device[4:]) - 1) // 32 + 1
            assert f"-su{su:03d}-" in link.z_device
    # no switch port is used twice, and no switch uses more ports than it has
    seen = set()
    for link in links:
        for dev, port in ((link.a_device, link.a_port), (link.z_device, link.z_port)):
            assert (dev, port) not in seen
            seen.add((dev, port))
            if not dev.startswith(("node", "compute-ufm")):
                assert 1 <= port <= 64


def test_three_tier_when_one_spine_layer_cannot_reach_every_leaf(tmp_path):
    # 2,047 DGX + UFM (16k GPUs) on QM9700: 64 SUs x 8 rails = 512 leaves; a 64-port spine reaches 64
    path = tmp_path / "big.yaml"
    path.write_text(DESIGN.format(sus=64, nodes=2047, planned=""))
    topo = load_topology(path)
    fab = topo.fabrics["compute"]
    leaf, spine, core = fab.tier("leaf"), fab.tier("spine"), fab.tier("core")
    assert leaf.count == 512 and spine is not None and core is not None
    assert spine.count * spine.down_ports >= leaf.count * leaf.up_ports      # spines take every leaf uplink
    assert core.count * core.down_ports >= spine.count * spine.up_ports      # cores take every spine uplink
    assert spine.down_ports == spine.up_ports                                 # 1:1 at the spine too


def test_group_graph_and_nvlink_domains():
    from tests.helpers import DESIGNS

    topo = load_topology(DESIGNS / "superpod-h100-4su.yaml")
    g = topo.graph()
    assert g.nodes["server"]["count"] == 127 and g.nodes["compute/leaf"]["count"] == 32
    edges = {(a, b): d["count"] for a, b, d in g.edges(data=True) if d["fabric"] == "compute"}
    assert edges[("server", "compute/leaf")] == 1016 and edges[("compute/leaf", "compute/spine")] == 1024
    import networkx as nx

    assert nx.has_path(g, "server", "oob/leaf")
    assert topo.nvlink_domain_of(0) == 0 and topo.nvlink_domain_of(8) == 1 and topo.nvlink_domain_of(1015) == 126
    nvl = load_topology(DESIGNS / "gb200-nvl72-mixtral.yaml")
    assert nvl.nvlink_domain_of(71) == 0 and nvl.nvlink_domain_of(72) == 1 and nvl.server_of(72) == 18
