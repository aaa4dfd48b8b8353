"""`clusterplan dcim`: the design as DCIM objects, and an idempotent sync (against an in-memory DCIM here;
tests/test_dcim_live.py repeats the sync against a real Nautobot server in .ci/run).

- every link of the cabling plan is one DCIM cable between the interfaces its two ends name, every device
  of the rack elevations one device at its rack and position, every port used once;
- applying the plan to an empty DCIM and planning again gives no change; adding 4 servers plans exactly
  their devices, their ports (and the switch ports they patch into), their cables, their rack and feed;
- drift (a moved device, a cable patched elsewhere) is reported; deletes touch only this design's tag;
- the Nautobot client itself (its id mapping, paging, bulk writes) does the same against an in-memory copy of
  Nautobot's REST API (tests/dcim_fake.py), reading only at depth=0 and writing a bulk request per chunk.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import threading
from collections import Counter

import pytest
import yaml

from tests.dcim_fake import FakeDcim, FakeNautobotApi
from tests.helpers import DESIGNS, FIXTURES, cli
from validator.base.errors import ToolError
from validator.emit.dcim import dcim_objects, interface_name
from validator.pipeline import analyze
from validator.workflows import dcim_nautobot
from validator.workflows.dcim import apply, drift, plan, tag_of
from validator.workflows.dcim_nautobot import Nautobot, settings

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


def _client(api: FakeNautobotApi) -> Nautobot:
    return Nautobot("http://nautobot.test", "token", transport=api)


def _sync(wanted, api: FakeNautobotApi):
    """Plan and apply with one client, as `clusterplan dcim sync --apply` does."""
    client = _client(api)
    p = plan(wanted, client)
    apply(p, client)
    return p


def test_the_nautobot_client_applies_in_bulk_and_reads_back_with_ids_mapped_to_names():
    wanted = _objects(SMALL)
    api = FakeNautobotApi()
    _sync(wanted, api)
    # a fresh client reads everything back (depth=0: references as ids, mapped to the names read before)
    assert plan(wanted, _client(api)).empty
    live = _client(api)
    cables = {k: v for k in ("racks", "devices", "interfaces", "cables") for v in [live.read(k, tag_of(wanted.site))]}
    assert {key: rec for key, (_, rec) in cables["cables"].items()} == wanted.objects["cables"]
    assert {key: rec for key, (_, rec) in cables["devices"].items()} == wanted.objects["devices"]
    # one bulk request per chunk: 824 interfaces and 412 cables (and one tag PATCH per cable chunk)
    chunk = settings().chunk
    assert api.count("POST", "interfaces") == math.ceil(824 / chunk)
    assert api.count("POST", "cables") == api.count("PATCH", "cables") == math.ceil(412 / chunk)
    # interfaces are read through GraphQL (their REST list costs queries per interface), everything else REST
    assert api.count("GET", "interfaces") == 0 and api.count("POST", "graphql") > 0


def test_the_nautobot_client_plans_four_more_servers_exactly_and_takes_them_back(tmp_path):
    api = FakeNautobotApi()
    _sync(_objects(SMALL), api)
    bigger = _objects(_with_count(tmp_path, 20))
    p = _sync(bigger, api)
    by_kind = Counter(c.kind for c in p.changes if c.action == "create")
    assert len(by_kind) == 5 and by_kind["devices"] == 4 and by_kind["cables"] == 4 * 9
    assert by_kind["interfaces"] == 2 * 4 * 9 and by_kind["racks"] == by_kind["power_feeds"] == 1
    assert plan(bigger, _client(api)).empty
    back = _sync(_objects(SMALL), api)
    assert {c.action for c in back.changes} == {"delete"} and len(back.changes) == sum(by_kind.values())
    assert plan(_objects(SMALL), _client(api)).empty


def test_the_nautobot_client_names_a_device_moved_into_someone_elses_rack():
    wanted = _objects(SMALL)
    api = FakeNautobotApi()
    _sync(wanted, api)
    # a rack without this design's tag (not read by the sync): its id is fetched once and named
    location = next(o["location"] for o in api.tables["racks"].values())
    other = api._create("racks", {"name": "someone-elses", "location": location, "u_height": 42, "tags": [],
                                  "status": "Planned"})
    device = next(o for o in api.tables["devices"].values() if o["name"] == "node00001")
    api._patch("devices", {"id": device["id"], "rack": other["id"]})
    rack = wanted.objects["devices"][("node00001",)]["rack"]
    assert drift(wanted, _client(api)) == [f"differs: devices node00001 rack: DCIM 'someone-elses', design {rack!r}"]


def test_an_apply_interrupted_before_a_cable_chunk_is_tagged_is_recovered_by_the_next_apply():
    """Nautobot drops a cable's tags on create, so the client tags each chunk by a PATCH after it: an apply
    cut between the two leaves that chunk's cables untagged. The next plan finds them between the design's
    own interfaces and adopts them (tags them), instead of creating them again (which Nautobot refuses)."""
    wanted = _objects(SMALL)
    api = FakeNautobotApi()
    patches = 0

    def cut_at_second_cable_tag(method, path, body):
        nonlocal patches
        if method == "PATCH" and path.startswith("dcim/cables/"):
            patches += 1
            if patches == 2:
                raise ToolError("Nautobot at http://nautobot.test: connection reset")
        return api(method, path, body)

    client = Nautobot("http://nautobot.test", "token", transport=cut_at_second_cable_tag)
    client.settings = dataclasses.replace(client.settings, workers=1)   # one chunk at a time: the cut is exact
    with pytest.raises(ToolError):
        apply(plan(wanted, client), client)
    chunk = settings().chunk
    untagged = [o for o in api.tables["cables"].values() if not o.get("tags")]
    assert len(api.tables["cables"]) == 2 * chunk and len(untagged) == chunk    # chunk 2 created, not tagged
    client = _client(api)
    again = plan(wanted, client)
    adopted = [c for c in again.changes if c.kind == "cables" and c.action == "update"]
    assert len(adopted) == chunk and all(c.fields == {"tag": (None, tag_of(wanted.site))} for c in adopted)
    # by hand: 412 cables, 2 chunks created -> the rest of the cables, the panel and 6 feeds are still to create
    assert Counter((c.kind, c.action) for c in again.changes if c not in adopted) == {
        ("cables", "create"): 412 - 2 * chunk, ("power_panels", "create"): 1, ("power_feeds", "create"): 6}
    apply(again, client)
    assert plan(wanted, _client(api)).empty
    assert all(o.get("tags") for o in api.tables["cables"].values()) and len(api.tables["cables"]) == 412


def test_the_nautobot_client_keeps_workers_bulk_requests_in_flight_and_an_interrupted_one_is_recovered():
    """`workers` (validator/data/dcim.yaml) chunks are sent at once: the first cable POSTs wait at a barrier of
    `workers` parties, which only that many requests in flight at the same time can pass (a client sending one
    at a time breaks it and the apply fails). Then a concurrent apply cut at a cable tag PATCH: whatever the
    other request in flight did, the next plan and apply complete the design, each cable once."""
    wanted = _objects(SMALL)
    workers = settings().workers
    assert workers == 2
    api, gate = FakeNautobotApi(), threading.Barrier(workers, timeout=60)
    in_flight, most, posts, lock = 0, 0, 0, threading.Lock()

    def concurrent(method, path, body):
        nonlocal in_flight, most, posts
        with lock:
            in_flight += 1
            most = max(most, in_flight)
            first = method == "POST" and path.startswith("dcim/cables/") and (posts := posts + 1) <= workers
        try:
            if first:
                gate.wait()         # breaks (BrokenBarrierError) unless `workers` requests are in flight at once
            return api(method, path, body)
        finally:
            with lock:
                in_flight -= 1

    client = Nautobot("http://nautobot.test", "token", transport=concurrent)
    apply(plan(wanted, client), client)
    assert most == workers and plan(wanted, _client(api)).empty
    assert api.count("POST", "cables") == math.ceil(412 / settings().chunk)

    api, patches = FakeNautobotApi(), 0

    def cut_at_second_cable_tag(method, path, body):
        nonlocal patches
        if method == "PATCH" and path.startswith("dcim/cables/"):
            with lock:
                patches += 1
                cut = patches == 2
            if cut:
                raise ToolError("Nautobot at http://nautobot.test: connection reset")
        return api(method, path, body)

    client = Nautobot("http://nautobot.test", "token", transport=cut_at_second_cable_tag)
    with pytest.raises(ToolError):
        apply(plan(wanted, client), client)
    assert 0 < sum(not o.get("tags") for o in api.tables["cables"].values()) <= settings().chunk
    client = _client(api)
    apply(plan(wanted, client), client)
    assert plan(wanted, _client(api)).empty
    assert all(o.get("tags") for o in api.tables["cables"].values()) and len(api.tables["cables"]) == 412


def test_after_a_failed_chunk_the_client_sends_no_further_chunk(monkeypatch):
    """Twenty parts, two in flight: the first fails after the second has started, and the second finishes
    only once the client has recorded that failure (its `failed` event, caught here: before, the second's
    thread could take part 2 in the moment between the raise and the record, and the test failed under load).
    Only the part already in flight may still be sent; the other eighteen are not, and the first part's error
    is the one raised."""
    client = _client(FakeNautobotApi())
    assert client.settings.workers == 2
    started, second_started, events = [], threading.Event(), []

    class Recorded(threading.Event):
        def __init__(self) -> None:
            super().__init__()
            events.append(self)

    monkeypatch.setattr(dcim_nautobot.threading, "Event", Recorded)

    def send(part):
        started.append(part)
        if part == 0:
            second_started.wait(timeout=60)      # part 1 is in flight when part 0 fails
            raise ToolError("chunk 0 refused")
        if part == 1:
            second_started.set()
            assert events[0].wait(timeout=60)    # the client's `failed`: set once part 0's failure is recorded
        return part

    with pytest.raises(ToolError, match="chunk 0 refused"):
        client._each(list(range(20)), send)
    assert sorted(started) == [0, 1]
