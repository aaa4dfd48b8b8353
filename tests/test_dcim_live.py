"""The DCIM sync against a real Nautobot server (.ci/nautobot-server starts one; .ci/run runs this file after
the unit suite with NAUTOBOT_URL and NAUTOBOT_TOKEN set; without them this file is not collected, see
tests/conftest.py). The same promises as tests/test_dcim.py, on the real data model:

- the SuperPOD and RoCE examples apply; read back, every rack, device and cable of the cabling plan is there
  with the same A/Z interface names, racks and positions;
- a second apply changes nothing;
- a 4-server change plans and applies exactly their devices, interfaces, cables, rack and feed.
"""

from __future__ import annotations

import csv
import io
import os

import yaml

from tests.helpers import DESIGNS, FIXTURES, cli
from validator.emit.dcim import dcim_objects, interface_name
from validator.pipeline import analyze
from validator.workflows.dcim import apply, plan
from validator.workflows.dcim_nautobot import Nautobot

SMALL = FIXTURES / "dcim" / "small.yaml"


def _server() -> Nautobot:
    return Nautobot(os.environ["NAUTOBOT_URL"], os.environ["NAUTOBOT_TOKEN"])


def _apply_and_check(design) -> None:
    wanted = dcim_objects(analyze(design).derived)
    code, out, err = cli("dcim", "sync", str(design), "--apply")
    assert code == 0, err
    assert "read back: the DCIM holds the design" in err
    # read back with a fresh client: every cable of the cabling plan, by its A/Z interface names
    server = _server()
    live = {k: server.read(k, f"clusterplan-{wanted.site}") for k in ("racks", "devices", "interfaces", "cables")}
    rows = list(csv.DictReader(io.StringIO(cli("cabling", str(design), "--format", "csv")[1])))
    assert len(live["cables"]) == len(rows)
    for r in rows:
        a = (r["a_device"], interface_name(wanted, r["a_device"], r["fabric"], r["a_interface"]))
        z = (r["z_device"], interface_name(wanted, r["z_device"], r["fabric"], r["z_interface"]))
        assert (*min(a, z), *max(a, z)) in live["cables"]
    assert set(live["racks"]) == set(wanted.objects["racks"])
    for key, record in wanted.objects["devices"].items():
        _, have = live["devices"][key]
        assert (have["rack"], have["position"]) == (record["rack"], record["position"])
    # a second apply plans no change
    code, out, _ = cli("dcim", "sync", str(design))
    assert code == 0 and "no change" in out


if os.environ.get("CLUSTERPLAN_DCIM_FULL"):
    # The examples' 10,000 and 19,000 objects take Nautobot's REST API (one object at a time behind each bulk
    # request, cable paths traced on every cable) tens of minutes on 2 cores: opt in, outside CI's budget.
    def test_superpod_example_applies_reads_back_and_reapplies_as_no_change() -> None:
        _apply_and_check(DESIGNS / "superpod-h100-4su.yaml")

    def test_roce_example_applies_reads_back_and_reapplies_as_no_change() -> None:
        _apply_and_check(DESIGNS / "roce-h100-2tier.yaml")


def test_four_more_servers_change_exactly_their_objects(tmp_path):
    _apply_and_check(SMALL)
    design = yaml.safe_load(SMALL.read_text(encoding="utf-8"))
    design["compute"]["count"] += 4
    bigger = tmp_path / "small.yaml"
    bigger.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    server = _server()
    p = plan(dcim_objects(analyze(bigger).derived), server)
    new = {f"node{n:05d}" for n in range(17, 21)}
    assert {c.action for c in p.changes} == {"create"}
    assert {c.key[0] for c in p.changes if c.kind == "devices"} == new
    assert sum(c.kind == "cables" for c in p.changes) == 4 * 9
    assert sum(c.kind == "interfaces" for c in p.changes) == 2 * 4 * 9
    assert all(new & {c.key[0], c.key[2]} for c in p.changes if c.kind == "cables")
    apply(p, server)
    assert plan(dcim_objects(analyze(bigger).derived), _server()).empty
    # and back: the 4 servers' objects are deleted, nothing else
    back = plan(dcim_objects(analyze(SMALL).derived), _server())
    assert {c.action for c in back.changes} == {"delete"}
    assert {c.key[0] for c in back.changes if c.kind == "devices"} == new
    apply(back, _server())
    assert plan(dcim_objects(analyze(SMALL).derived), _server()).empty
