"""One port name everywhere: for every link of the example designs, the cabling plan's interface
names and cable id are the ones both ends' configurations use (the plan joined with the configs), so
a technician patches from the plan and the configs at the same time."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.helpers import DESIGNS, FIXTURES
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.emit.render import render_configs
from validator.pipeline import load_topology

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
EXAMPLES = [DESIGNS / "roce-h100-2tier.yaml", DESIGNS / "b300-spectrum-x-dual-plane.yaml",
            DESIGNS / "inference-disaggregated-h100.yaml", FIXTURES / "render" / "small-eos.yaml"]


def _ports(path: str, text: str) -> dict[str, str]:
    """interface name -> description, as the configuration of one switch sets them."""
    if path.endswith("config_db.json"):
        config = json.loads(text)
        return {name: port["description"] for table in ("PORT", "MGMT_PORT") for name, port in config[table].items()}
    if path.endswith(".cfg"):
        blocks = re.findall(r"^interface (\S+)\n   description (.*)\n", text, re.M)
        return dict(blocks)
    body = yaml.load(text, Loader=_LOADER)[1]["set"]
    return {name: port["description"] for name, port in body["interface"].items() if "description" in port}


def _configs(design: Path) -> dict[str, dict[str, str]]:
    out = {}
    for item in render_configs(load_topology(design)):
        if item.path.endswith(("config_db.json", ".cfg", "startup.yaml")):
            out[Path(item.path).name.split(".")[0]] = _ports(item.path, item.text)
    return out


@pytest.mark.parametrize("design", EXAMPLES, ids=lambda p: p.stem)
def test_the_cabling_plan_names_the_ports_the_configs_use(design):
    configs = _configs(design)
    plan = Plan(load_topology(design))
    joined: Counter[str] = Counter()
    for row in plan.rows():
        r = dict(zip(CABLING_COLUMNS, row, strict=True))
        for end, far in (("z", "a"), ("a", "z")):
            ports = configs.get(str(r[f"{end}_device"]))
            if ports is None:
                continue                    # a server, storage node or appliance: no configuration
            # the port is configured under the plan's name, and says what is at its far end and on which cable
            assert r[f"{end}_interface"] in ports, (r, sorted(ports)[:4])
            assert ports[r[f"{end}_interface"]] == f"{r[f'{far}_device']}:{r[f'{far}_interface']} cable {r['cable_id']}"
            joined[end] += 1
    assert joined["z"] > 0, "no link end was joined to a configuration"
    # every configured port is some link's end in the plan
    assert joined["z"] + joined["a"] == sum(len(p) for p in configs.values())


def test_a_split_cage_is_named_by_cage_and_lane_on_each_os():
    # a Tomahawk 5 leaf at 400G: 64 OSFP cages of 8 lanes, 2 ports per cage. Logical port 2 is the second
    # half of cage 1: lanes 4-7, SONiC Ethernet4, EOS Ethernet1/5, NVUE swp1s1 (the second sub-port)
    from validator.derive.port_names import tier_ports

    topology = load_topology(DESIGNS / "roce-h100-2tier.yaml")
    leaf = tier_ports(topology.fabrics["compute"].tier("leaf"))
    second = leaf[2]
    assert (second.sonic, second.lanes, second.eos, second.nvue) == ("Ethernet4", "4,5,6,7", "Ethernet1/5", "swp1s1")
    # port 65 (the first uplink) is cage 33, lane 1: Ethernet256 (32 cages x 8 lanes), Ethernet33/1, swp33s0
    assert (leaf[65].sonic, leaf[65].eos, leaf[65].nvue) == ("Ethernet256", "Ethernet33/1", "swp33s0")


def test_the_plan_filters_per_rack_and_per_switch():
    import csv
    import io

    from tests.helpers import cli

    design = "designs/roce-h100-2tier.yaml"
    code, out, _ = cli("cabling", design)
    assert code == 0
    every = list(csv.DictReader(io.StringIO(out)))
    code, out, _ = cli("cabling", design, "--switch", "compute-spine0001")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and rows == [r for r in every if "compute-spine0001" in (r["a_device"], r["z_device"])]
    # a 400G Tomahawk 5 spine: 64 cages x 2 ports, every one a leaf uplink, plus its management port
    assert len(rows) == 64 * 2 + 1
    code, out, _ = cli("cabling", design, "--rack", "R01-09", "--format", "json")
    links = json.loads(out)["links"]
    assert code == 0 and links and all("R01-09" in (r["a_rack"], r["z_rack"]) for r in links)
    assert len(links) == sum("R01-09" in (r["a_rack"], r["z_rack"]) for r in every)
