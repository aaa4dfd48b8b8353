"""`clusterplan failures`: losses of one failure per class, computed by hand for a two-tier and a three-tier
fabric (tests/fixtures/failures/), the training job's fate, replicas lost, spares and single points of failure."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest

from tests.helpers import DESIGNS, FIXTURES, ROOT, cli, rel
from validator.derive.failures import analyze_failures
from validator.derive.failures.graph import fabric_graph
from validator.derive.failures.impact import Failure, fabric_impact
from validator.derive.failures.spares import poisson_stock
from validator.pipeline import analyze

SCHEMA = json.loads((ROOT / "schemas" / "failures.schema.json").read_text())


def _json(path) -> dict:
    code, out, err = cli("failures", str(path), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    return data


def _classes(data: dict) -> dict[str, dict]:
    return {c["class"]: c for c in data["classes"]}


def _lost(c: dict) -> dict[str, tuple[int, int]]:
    return {f"{b['fabric']} {b['tier']}": (b["links_lost"], b["links"]) for b in c["bandwidth"]}


@pytest.fixture(scope="module")
def two_tier() -> dict[str, dict]:
    return _classes(_json(FIXTURES / "failures" / "two-tier.yaml"))


@pytest.fixture(scope="module")
def three_tier() -> dict[str, dict]:
    return _classes(_json(FIXTURES / "failures" / "three-tier.yaml"))


# two tiers: 16 servers x 8 rails = 128 server links on 8 rail leaves (16 down, 16 up); 4 spines, so each
# leaf-spine pair carries 16 / 4 = 4 links and 8 x 16 = 128 leaf-spine links. The job: tp 8 x dp 12 = 96
# GPUs on servers 0-11; servers 12-15 are spare.
SERVERS, RAILS, LEAF_UP, SPINES = 16, 8, 16, 4


def test_two_tier_leaf(two_tier):
    leaf = two_tier["compute leaf"]
    # the rail-1 leaf carries one link of every server: 16 server links and its 16 uplinks
    assert _lost(leaf)["compute endpoint-leaf"] == (SERVERS, SERVERS * RAILS)
    assert _lost(leaf)["compute leaf-spine"] == (LEAF_UP, RAILS * LEAF_UP)
    # every server keeps 7 of 8 links but its rail-1 NIC (one link per NIC) is dead: 16 GPUs lose their NIC
    assert leaf["gpus_unreachable"] == 0 and leaf["gpus_without_nic"] == SERVERS * 1
    assert leaf["bandwidth_left_share"] == 7 / 8
    # all 12 job servers have such a NIC and no server is left outside the lost ones: blocked, DP 12 -> 0
    t = leaf["training"]
    assert (t["status"], t["gpus_lost"], t["dp"], t["dp_after"]) == ("blocked", 12 * 8, 12, 0)


def test_two_tier_spine(two_tier):
    spine = two_tier["compute spine"]
    # 8 leaves x 4 links to the failed spine = 32 of 128 leaf-spine links (25 %), 32 x 400G lost
    assert _lost(spine) == {"compute leaf-spine": (RAILS * LEAF_UP // SPINES, RAILS * LEAF_UP)}
    assert spine["bandwidth"][0]["gbps_lost"] == 32 * 400
    # each leaf keeps 12 of 16 uplinks; the job runs on at the slowest path
    assert spine["bandwidth_left_share"] == 12 / 16
    assert spine["training"]["status"] == "degraded" and spine["gpus_unreachable"] == 0


def test_two_tier_links_servers_and_racks(two_tier):
    one = two_tier["compute link server-leaf"]
    # one server link: its NIC is dead, the server leaves the job; 4 spare servers take its place
    assert _lost(one)["compute endpoint-leaf"] == (1, 128) and one["gpus_without_nic"] == 1
    assert (one["training"]["status"], one["training"]["gpus_lost"]) == ("interrupted", 8)
    uplink = two_tier["compute link leaf-spine"]
    assert _lost(uplink) == {"compute leaf-spine": (1, 128)} and uplink["bandwidth_left_share"] == 15 / 16
    server = two_tier["server"]
    assert server["gpus_down"] == 8 and server["training"]["status"] == "interrupted"
    # a GPU rack of 4 job servers: exactly the 4 spare servers replace them (boundary of interrupted)
    rack = two_tier["GPU rack"]
    assert rack["gpus_unreachable"] == 4 * 8
    assert (rack["training"]["status"], rack["training"]["gpus_lost"]) == ("interrupted", 32)
    assert two_tier["rear-door heat exchanger"]["gpus_down"] == 4 * 8


def test_two_tier_pdu_is_at_risk_not_zero(two_tier):
    pdu = two_tier["PDU"]
    # 4 x 10.2 kW DGX H100 = 40.8 kW per rack over 34.5 kW PDUs: 2 PDUs per feed, each feeding half the rack
    per_feed = math.ceil(4 * 10.2 / 34.5)
    assert pdu["gpus_unreachable"] is None and pdu["gpus_at_risk"] == math.ceil(32 / per_feed)
    assert pdu["training"] is None


def test_two_tier_spares(two_tier):
    # servers: 128 GPUs x 0.1056 failures per GPU-year x 7 days, Poisson, 99 %
    mean = 128 * 0.1056 * 7 / 365
    cdf = [math.exp(-mean) * mean ** k / math.factorial(k) for k in range(10)]
    want = next(k for k in range(10) if sum(cdf[:k + 1]) >= 0.99)
    assert two_tier["server"]["spares"]["count"] == want == 2
    # compute switches: at least one per model; links are spared by the BOM's optics and cables
    assert two_tier["compute spine"]["spares"]["count"] == 1
    assert two_tier["compute link server-leaf"]["spares"]["count"] is None


# three tiers: 4 pods (one SU of 8 servers each) of 8 rail leaves (8 down, 8 up) and 2 spines, so each
# leaf-spine pair carries 4 links; spine j of every pod joins core group j of 2 cores (32 uplinks: 16 to each).
# 256 server links, 32 x 8 = 256 leaf-spine links, 8 x 32 = 256 spine-core links.


def test_three_tier_spine(three_tier):
    spine = three_tier["compute spine"]
    # the failed spine: 8 leaves x 4 links below it, its 32 uplinks above it
    assert _lost(spine) == {"compute leaf-spine": (8 * 4, 256), "compute spine-core": (32, 256)}
    # its pod's leaves keep 4 of 8 uplinks; the pod keeps 32 of its 64 core uplinks
    assert spine["bandwidth_left_share"] == 4 / 8
    assert spine["training"]["status"] == "degraded"


def test_three_tier_core(three_tier):
    core = three_tier["compute core"]
    # one core of group 0: 16 links from spine 0 of each of the 4 pods
    assert _lost(core) == {"compute spine-core": (4 * 16, 256)}
    # each pod keeps 64 - 16 = 48 of its 64 core uplinks
    assert core["bandwidth_left_share"] == (64 - 16) / 64 and core["gpus_unreachable"] == 0


def test_three_tier_leaf_and_links(three_tier):
    leaf = three_tier["compute leaf"]
    assert _lost(leaf) == {"compute endpoint-leaf": (8, 256), "compute leaf-spine": (8, 256)}
    # 8 servers of the SU lose their rail-1 NIC; the job uses all 32 servers: blocked, DP 32 -> (32 - 8)
    t = leaf["training"]
    assert (t["status"], t["gpus_lost"], t["dp_after"]) == ("blocked", 8 * 8, 32 - 8)
    assert three_tier["compute link spine-core"]["bandwidth_left_share"] == 63 / 64
    assert three_tier["compute link leaf-spine"]["bandwidth_left_share"] == 7 / 8


def test_three_tier_pod_cut_off_when_its_spines_fail():
    path = FIXTURES / "failures" / "three-tier.yaml"
    topology = analyze(path, rel(path)).topology
    g = fabric_graph(topology, "compute")
    both = Failure(switches=frozenset({("compute", "spine", 0), ("compute", "spine", 1)}))
    impact = fabric_impact(g, both)
    # pod 1's 8 leaves lose every uplink: its 8 servers reach no other pod
    assert impact.cut_off == set(range(8))
    assert impact.links_lost == {"leaf-spine": 8 * 8, "spine-core": 2 * 32}


def test_inference_replicas_lost():
    data = _classes(_json(DESIGNS / "inference-disaggregated-h100.yaml"))
    # a top-of-rack leaf serves the 4 servers of its rack; the replicas are 8 GPUs (one server) each and need
    # the compute fabric for the KV transfer: prefill replicas 0-3 stand on servers 0-3
    leaf = data["compute leaf"]["inference"]
    assert [(p["pool"], p["planned"], p["lost"]) for p in leaf["pools"]] == [("prefill", 8, 4), ("decode", 16, 0)]
    assert data["compute leaf"]["gpus_unreachable"] == 4 * 8


def test_single_points_of_failure():
    data = _json(DESIGNS / "inference-h200-llama3-70b.yaml")
    spofs = {(s["component"], s["severity"]) for s in data["single_points_of_failure"]}
    assert {("compute leaf", "warning"), ("inband leaf", "warning"), ("oob leaf", "info")} <= spofs
    inband = next(s for s in data["single_points_of_failure"] if s["component"] == "inband leaf")
    text = (DESIGNS / "inference-h200-llama3-70b.yaml").read_text().splitlines()
    assert text[inband["line"] - 1].strip().startswith("leaf:") and inband["path"] == "fabrics.inband.tiers.leaf"
    # the front-end leaf takes every replica: the target is no longer met
    lost = _classes(data)["inband leaf"]["inference"]
    assert lost["replicas_lost"] == lost["pools"][0]["planned"] and lost["meets_target"] is False
    # two spines: no spine is a single point of failure
    two = _json(FIXTURES / "failures" / "two-tier.yaml")
    assert not [s for s in two["single_points_of_failure"] if s["component"].startswith("compute")]


def test_poisson_stock():
    assert poisson_stock(0.0, 0.99) == 0
    # P(N <= 1) = e^-0.1 (1 + 0.1) = 0.99532 >= 0.99, P(N = 0) = 0.905 < 0.99
    assert poisson_stock(0.1, 0.99) == 1


@pytest.mark.parametrize("path", sorted(DESIGNS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_design(path):
    data = _json(path)
    assert data["classes"] and all(c["spares"]["basis"] for c in data["classes"])
    _, text, _ = cli("failures", str(path))
    assert text.startswith(data["name"]) and ("single points of failure:" in text) == bool(
        data["single_points_of_failure"])


def test_analysis_is_deterministic():
    path = FIXTURES / "failures" / "two-tier.yaml"
    a = analyze(path, rel(path))
    assert a.topology is not None
    first = analyze_failures(a.topology, a.derived)
    again = analyze_failures(a.topology, a.derived)
    assert [c.member for c in first.classes] == [c.member for c in again.classes]


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_storage_fabric_losses_are_told_apart_from_compute():
    data = _classes(_json(DESIGNS / "superpod-h100-4su.yaml"))
    # storage at 200G (QM9700: 64 cages of 2 x NDR200 = 128 ports): 127 DGX x 2 + 16 storage nodes x 2 = 286
    # server ports on leaves of 64 down / 64 up -> 5 leaves; their 320 uplinks need 3 spines of 128 ports, and
    # 4 is the fewest that divides each leaf's 64 evenly, so a spine takes 16 of each leaf's 64
    t = data["storage spine"]["training"]
    assert (t["status"], t["bandwidth_left_share"], t["storage_bandwidth_left_share"]) == ("degraded", 1.0, 48 / 64)
