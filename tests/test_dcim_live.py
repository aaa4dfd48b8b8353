"""The DCIM sync against a real Nautobot server (.ci/nautobot-server starts one; the DCIM stage of .ci/run runs
this file after the unit suite with NAUTOBOT_URL and NAUTOBOT_TOKEN set; without them this file is not
collected, see tests/conftest.py). The same promises as tests/test_dcim.py, on the real data model:

- a design applies; read back with a fresh client, every rack and device is there at its rack and position,
  and every cable of the cabling plan with the same A/Z interface names and its cable id as label;
- a second `sync --apply` changes nothing;
- a 4-server change plans and applies exactly their devices, interfaces, cables, rack and feed, and taking
  it back deletes exactly those;
- cables an interrupted apply left untagged are adopted (tagged) by the next plan, not created again.

The SuperPOD example (10,355 objects), the RoCE example (20,499 objects) and the 16-server fixture run always
(docs/dcim.md has the measurements); CLUSTERPLAN_DCIM_QUICK=1 skips the two examples on a developer's machine
(the CI run, CLUSTERPLAN_NO_SKIP=1, fails on a skip). The tests share one server: run them in file order (`-n 0`).
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.helpers import DESIGNS, FIXTURES, cli
from validator.emit.dcim import DcimObjects, dcim_objects, interface_name
from validator.pipeline import analyze
from validator.workflows.dcim import apply, plan, tag_of
from validator.workflows.dcim_nautobot import Nautobot

SMALL = FIXTURES / "dcim" / "small.yaml"


def _server() -> Nautobot:
    return Nautobot(os.environ["NAUTOBOT_URL"], os.environ["NAUTOBOT_TOKEN"])


def _objects(design: Path) -> DcimObjects:
    return dcim_objects(analyze(design).derived)


def _apply_and_check(design: Path) -> None:
    if os.environ.get("CLUSTERPLAN_DCIM_QUICK") and design != SMALL:
        pytest.skip("CLUSTERPLAN_DCIM_QUICK=1: the examples' sync is left to the CI run")
    wanted = _objects(design)
    code, _, err = cli("dcim", "sync", str(design), "--apply")
    assert code == 0, err
    assert "read back: the DCIM holds the design" in err
    # read back with a fresh client: every cable of the cabling plan, by its A/Z interface names and label
    server = _server()
    live = {k: server.read(k, tag_of(wanted.site)) for k in ("racks", "devices", "interfaces", "cables")}
    code, out, _ = cli("cabling", str(design), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(live["cables"]) == len(rows) > 0
    for r in rows:
        a = (r["a_device"], interface_name(wanted, r["a_device"], r["fabric"], r["a_interface"]))
        z = (r["z_device"], interface_name(wanted, r["z_device"], r["fabric"], r["z_interface"]))
        _, cable = live["cables"][(*min(a, z), *max(a, z))]
        assert cable["label"] == r["cable_id"]
    assert set(live["interfaces"]) == set(wanted.objects["interfaces"])
    assert set(live["racks"]) == set(wanted.objects["racks"])
    assert set(live["devices"]) == set(wanted.objects["devices"])
    for key, record in wanted.objects["devices"].items():
        _, have = live["devices"][key]
        assert (have["rack"], have["position"]) == (record["rack"], record["position"])
    # a second apply changes nothing
    code, out, err = cli("dcim", "sync", str(design), "--apply")
    assert code == 0 and "no change" in out and "no change to apply" in err


def test_superpod_example_applies_reads_back_and_reapplies_as_no_change() -> None:
    _apply_and_check(DESIGNS / "superpod-h100-4su.yaml")


def test_roce_example_applies_reads_back_and_reapplies_as_no_change() -> None:
    _apply_and_check(DESIGNS / "roce-h100-2tier.yaml")


def test_four_more_servers_change_exactly_their_objects(tmp_path: Path) -> None:
    _apply_and_check(SMALL)
    design = yaml.safe_load(SMALL.read_text(encoding="utf-8"))
    design["compute"]["count"] += 4
    bigger = tmp_path / "small.yaml"
    bigger.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    server = _server()
    p = plan(_objects(bigger), server)
    new = {f"node{n:05d}" for n in range(17, 21)}
    by_kind = Counter(c.kind for c in p.changes)
    assert {c.action for c in p.changes} == {"create"}
    assert {c.key[0] for c in p.changes if c.kind == "devices"} == new
    # by hand: each new server has 8 rail links and 1 management link, a cable with two new ports each;
    # 4 servers per rack: one more rack, and its power feed
    assert by_kind == {"devices": 4, "cables": 4 * 9, "interfaces": 2 * 4 * 9, "racks": 1, "power_feeds": 1}
    assert all(new & {c.key[0], c.key[2]} for c in p.changes if c.kind == "cables")
    apply(p, server)
    assert plan(_objects(bigger), _server()).empty
    # and back: exactly the 4 servers' objects are deleted
    server = _server()
    back = plan(_objects(SMALL), server)
    assert {c.action for c in back.changes} == {"delete"} and Counter(c.kind for c in back.changes) == by_kind
    apply(back, server)
    assert plan(_objects(SMALL), _server()).empty


def test_cables_left_untagged_by_an_interrupted_apply_are_adopted_by_the_next() -> None:
    """An apply cut between a cable chunk's create and its tag PATCH (Nautobot drops a cable's tags on create)
    leaves untagged cables; the next plan tags exactly those instead of creating them again."""
    wanted = _objects(SMALL)
    code, _, err = cli("dcim", "sync", str(SMALL), "--apply")
    assert code == 0, err
    server = _server()
    kinds = ("locations", "racks", "devices", "interfaces", "cables")     # in order: each names the next's refs
    cables = [server.read(k, tag_of(wanted.site)) for k in kinds][-1]
    cut = sorted(cables)[:3]
    server.request("PATCH", "dcim/cables/", [{"id": cables[k][0], "tags": []} for k in cut])
    client = _server()
    p = plan(wanted, client)
    assert [(c.action, c.kind, c.key, c.fields) for c in p.changes] == [
        ("update", "cables", k, {"tag": (None, tag_of(wanted.site))}) for k in cut]
    apply(p, client)
    assert plan(wanted, _server()).empty
