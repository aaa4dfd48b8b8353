"""`clusterplan dcim`: the design as DCIM objects, and an idempotent sync (against an in-memory DCIM here;
tests/test_dcim_live.py repeats the sync against a real Nautobot server in .ci/run).

- every link of the cabling plan is one DCIM cable between the interfaces its two ends name, every device
  of the rack elevations one device at its rack and position, every port used once;
- applying the plan to an empty DCIM and planning again gives no change; adding 4 servers plans exactly
  their devices, their ports (and the switch ports they patch into), their cables, their rack and feed;
- drift (a moved device, a cable patched elsewhere) is reported; deletes touch only this design's tag.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import yaml

from tests.dcim_fake import FakeDcim
from tests.helpers import DESIGNS, FIXTURES, cli
from validator.emit.dcim import dcim_objects, interface_name
from validator.pipeline import analyze
from validator.workflows.dcim import apply, drift, plan, tag_of

SMALL = FIXTURES / "dcim" / "small.yaml"


def _objects(path):
    return dcim_objects(analyze(path).derived)


def _with_count(tmp_path, count: int):
    design = yaml.safe_load(SMALL.read_text(encoding="utf-8"))
    design["compute"]["count"] = count
    path = tmp_path / f"small-{count}.yaml"
    path.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    return path


def test_every_cabling_plan_link_is_one_cable_between_named_interfaces():
    for design in (DESIGNS / "superpod-h100-4su.yaml", DESIGNS / "roce-h100-2tier.yaml"):
        objects = _objects(design)
        code, out, _ = cli("cabling", str(design), "--format", "csv")
        assert code == 0
        rows = list(csv.DictReader(io.StringIO(out)))
        cables = objects.objects["cables"]
        assert len(cables) == len(rows)
        for r in rows:
            a = (r["a_device"], interface_name(objects, r["a_device"], r["fabric"], r["a_interface"]))
            z = (r["z_device"], interface_name(objects, r["z_device"], r["fabric"], r["z_interface"]))
            assert (*min(a, z), *max(a, z)) in cables
        # every interface is the end of exactly one cable: no port used twice
        ends = Counter(e for c in cables.values() for e in ((c["a_device"], c["a_interface"]),
                                                            (c["z_device"], c["z_interface"])))
        assert set(ends.values()) == {1} and set(ends) == set(objects.objects["interfaces"])


def test_devices_stand_where_the_rack_elevations_put_them():
    design = DESIGNS / "superpod-h100-4su.yaml"
    objects = _objects(design)
    racks = json.loads(cli("racks", str(design), "--format", "json")[1])
    devices = objects.objects["devices"]
    placed = [(s["device"], r["name"], s["ru_bottom"]) for r in racks["racks"] for s in r["slots"]
              if s["device"] and s["kind"] != "empty"]
    assert len(devices) == len(placed)
    for name, rack, ru in placed:
        assert devices[(name,)]["rack"] == rack and devices[(name,)]["position"] == ru
    assert len(objects.objects["racks"]) == racks["racks_total"]


def test_export_is_deterministic_and_validates_against_its_schema(tmp_path):
    from jsonschema import Draft202012Validator

    from tests.helpers import ROOT

    code, first, _ = cli("dcim", "export", str(SMALL))
    assert code == 0 and cli("dcim", "export", str(SMALL))[1] == first
    schema = json.loads((ROOT / "schemas" / "dcim.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(json.loads(first))


def test_apply_then_plan_again_is_a_no_op():
    wanted = _objects(SMALL)
    dcim = FakeDcim()
    first = plan(wanted, dcim)
    assert {c.action for c in first.changes} == {"create"}
    apply(first, dcim)
    assert plan(wanted, dcim).empty
    # by hand: 16 servers x (8 compute + 1 oob) cables, 8 leaves x 32 uplinks... spread over 4 spines
    cables = wanted.objects["cables"]
    assert sum(1 for k in cables if k[0].startswith("node") or k[2].startswith("node")) == 16 * (8 + 1)


def test_adding_four_servers_plans_exactly_their_objects(tmp_path):
    dcim = FakeDcim()
    apply(plan(_objects(SMALL), dcim), dcim)
    bigger = _objects(_with_count(tmp_path, 20))
    p = plan(bigger, dcim)
    assert {c.action for c in p.changes} == {"create"}
    by_kind = Counter(c.kind for c in p.changes)
    new = {f"node{n:05d}" for n in range(17, 21)}
    assert {c.key[0] for c in p.changes if c.kind == "devices"} == new
    # each new server: 8 rail links + 1 management link, each a cable with two new interfaces
    assert by_kind["cables"] == 4 * 9 and by_kind["interfaces"] == 2 * 4 * 9
    assert all(new & {c.key[0], c.key[2]} for c in p.changes if c.kind == "cables")
    assert by_kind["racks"] == 1 and by_kind["power_feeds"] == 1      # 4 servers per rack: one more rack
    assert set(by_kind) == {"devices", "interfaces", "cables", "racks", "power_feeds"}
    apply(p, dcim)
    assert plan(bigger, dcim).empty


def test_drift_names_a_moved_device_and_a_repatched_cable():
    wanted = _objects(SMALL)
    dcim = FakeDcim()
    apply(plan(wanted, dcim), dcim)
    dcim.move("devices", ("node00001",), position=40)
    cable = sorted(wanted.objects["cables"])[0]
    dcim.move("cables", cable, label="patched elsewhere")
    lines = drift(wanted, dcim)
    assert any("devices node00001 position: DCIM 40, design 1" in line for line in lines)
    assert any(line.startswith("differs: cables") and "label" in line for line in lines)
    assert len(lines) == 2


def test_deletes_touch_only_this_designs_tag(tmp_path):
    dcim = FakeDcim()
    other = FakeDcim.key("devices", {"name": "someone-elses"})
    dcim.rows["devices"] = {"x": (other, {"name": "someone-elses"}, "clusterplan-other-site")}
    apply(plan(_objects(_with_count(tmp_path, 20)), dcim), dcim)
    p = plan(_objects(SMALL), dcim)
    deleted = {c.key for c in p.changes if c.action == "delete" and c.kind == "devices"}
    assert deleted == {(f"node{n:05d}",) for n in range(17, 21)}
    assert tag_of("dcim-small") == "clusterplan-dcim-small"


def test_sync_needs_the_server_from_the_environment(monkeypatch):
    monkeypatch.delenv("NAUTOBOT_URL", raising=False)
    monkeypatch.delenv("NAUTOBOT_TOKEN", raising=False)
    code, _, err = cli("dcim", "sync", str(SMALL))
    assert code == 2 and "NAUTOBOT_URL and NAUTOBOT_TOKEN" in err
