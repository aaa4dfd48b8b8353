"""A 4-node DGX BasePOD with its three networks (issue 25, "Done when": the 4-node BasePOD validates clean with
the published switch counts).

What is published, and where (every source below was searched for a table of switches by node count, and
none has one; the figures that are published are asserted as such, the others are arithmetic written here):

- NVIDIA DGX BasePOD Reference Architecture RA-11127-001 (B200, H200, H100), "Reference Architectures"
  (docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/
  reference-architectures.html), Table 1 "DGX BasePOD Components": compute nodes 2-8; compute fabric
  "NVIDIA Quantum QM9700 NDR400 Gbps InfiniBand switch"; management and storage fabric "NVIDIA SN4600C
  switches"; OOB management fabric "NVIDIA SN2201 switches"; "eight compute connections from each node
  running at NDR400". It names the switch models, not their number per node count (the stored copies of the
  page end before its switch section; no copy of a "switches and cables" table for 2, 4 or 8 nodes was found
  in the docs, pages or code corpora, nor in /work/shared/reference).
- NVIDIA DGX BasePOD Deployment Guide (DGX H200/H100), "Network Deployment"
  (docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/network-deploy.html): "MLAG between the
  two SN4600C switches"; "Each headnode / K8s node / DGX is dual homed to the SN4600C switches via bond
  interface". **Published: 2 SN4600C**, the MLAG pair of every BasePOD of the guide, whatever its node count.
- The same guide, "Networking" (network-overview.html): each DGX uses "Eight ports in four OSFP connections"
  for the InfiniBand compute fabric, one bonded pair (slot 1 port 2, slot 2 port 2) for in-band management
  and storage, and its BMC on the out-of-band network.

Not published for 4 nodes, so held by arithmetic here:
- QM9700: 4 nodes x 8 NDR400 links = 32 of one QM9700's 64 ports; the BasePOD's two compute leaves with every
  node on both (4 links to each, `attachment: dual`) is 2 switches.
- SN2201: 4 BMC ports + the management ports of 2 QM9700 and 2 SN4600C = 8 of 48 RJ45 ports: 1 switch.

The in-band fabric runs at 100GbE because the SN4600C is a 64 x 100GbE switch (catalog entry `sn4600c`),
while the DGX H100's dual-port ConnectX-7 runs 200G natively; its manual names 100G as a port speed too
("Dual-port 100 or 200Gb/s", catalog `cx7-qsfp112-dual` speeds_gbps), so the links train at 100G on both
ends and NET002 has nothing to report (it once did, and the BasePOD needed a waiver).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tests.builders import training
from validator.pipeline import analyze

PUBLISHED_SN4600C = 2   # deployment guide, "Network Deployment": "MLAG between the two SN4600C switches"
ARITHMETIC_QM9700 = 2   # 4 x 8 = 32 links; two leaves with every node on both (docstring)
ARITHMETIC_SN2201 = 1   # 4 BMCs + 4 switch management ports = 8 of 48 ports (docstring)


def _basepod_4() -> dict[str, Any]:
    design = training(
        {"server": "dgx-h100", "count": 4, "servers_per_rack": 4},
        {"type": "infiniband", "speed_gbps": 400, "attachment": "dual", "tiers": {"leaf": {"switch": "qm9700"}}},
        fabrics={"inband": {"type": "ethernet", "speed_gbps": 100, "attachment": "dual",
                            "tiers": {"leaf": {"switch": "sn4600c"}}},
                 "oob": {"type": "ethernet", "speed_gbps": 1, "tiers": {"leaf": {"switch": "sn2201"}}}},
        storage={"type": "parallel-fs", "write_gbytes_s": 20})
    return design


def test_four_node_basepod_switch_counts_and_clean_validation():
    analysis = analyze(Path("basepod.yaml"), "basepod.yaml", text=yaml.safe_dump(_basepod_4(), sort_keys=False))
    assert analysis.topology is not None, [f.message for f in analysis.findings]
    fabrics = analysis.topology.fabrics
    counts = {name: {tier: fabrics[name].count(tier) for tier in ("leaf", "spine", "core")}
              for name in ("compute", "inband", "oob")}
    assert counts == {"compute": {"leaf": ARITHMETIC_QM9700, "spine": 0, "core": 0},
                      "inband": {"leaf": PUBLISHED_SN4600C, "spine": 0, "core": 0},
                      "oob": {"leaf": ARITHMETIC_SN2201, "spine": 0, "core": 0}}
    # links: 8 NDR400 per node (RA Table 1 text), a bonded pair per node (deployment guide), 4 BMCs and 4
    # switch management ports on the SN2201
    assert analysis.derived is not None
    links = Counter(str(row[0]) for row in analysis.derived.cabling.rows())
    assert links == {"compute": 4 * 8, "inband": 4 * 2, "oob": 4 + 4}
    # clean as the SuperPOD designs of tests/test_fabric_sizing.py are: no finding of any rule (the 200G
    # dual-port ConnectX-7 runs its in-band ports at 100G, a speed its manual names: "Dual-port 100 or
    # 200Gb/s", so NET002 has nothing to say)
    assert [f"{f.rule} {f.message}" for f in analysis.findings] == []
