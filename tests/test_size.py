"""`clusterplan size`: the documented training and inference requests (sizing/*.yaml) give designs whose
validate, estimate and BOM results are pinned here by arithmetic on published figures, and a brute force
written here (every design of a small space built by hand and analysed by the normal pipeline) finds the same
optimum for every objective."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT, cli, rel
from validator.pipeline import analyze

TRAINING = ROOT / "sizing" / "llama3-8b-pretrain.yaml"
SERVING = ROOT / "sizing" / "llama3-70b-chat.yaml"

# published figures (also in the catalog and the built-in price book, each with its source)
H100_BF16_DENSE_TFLOPS = 989      # NVIDIA H100 SXM datasheet, BF16 dense
H100_HBM_GB, H200_HBM_GB = 80, 141
DGX_H100_KW = 10.2                # NVIDIA DGX H100 user guide, maximum system power
DGX_H100_USD = 270_000            # SemiAnalysis (price book dgx-h100)
LLAMA3_8B_PARAMS, LLAMA3_70B_PARAMS = 8.03e9, 70.55e9   # Meta Llama 3 model card / config.json


def _size(request: Path, *args: str) -> dict:
    code, out, err = cli("size", str(request), "--format", "json", *args)
    assert code == 0, err
    return json.loads(out)


def _json(*args: str) -> dict:
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _best(result: dict, objective: str) -> dict:
    label = result["best"][objective][0]
    return next(d for d in result["designs"] if d["label"] == label)


def _line(bom: dict, part: str, fabric: str | None = None) -> dict:
    return next(i for i in bom["items"] if i["part"] == part and (fabric is None or i["fabric"] == fabric))


# ---------------------------------------------------------------- the documented training request


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    out = tmp_path_factory.mktemp("sized-training")
    return _size(TRAINING, "-o", str(out)), out


def test_training_smallest_is_the_fewest_gpus_that_meet_the_deadline(training, tmp_path):
    """Llama 3 8B on 1e11 tokens in 7 days. 6 x params FLOPs per token (attention only adds) on 8 H100 at 100% of
    their BF16 peak take more than 7 days, so no 8-GPU cluster can meet the deadline. The sizes the space holds
    next are whole 8-GPU servers with DP dividing the global batch of 128: 16, then 32. At the estimator's ~45 %
    MFU 16 GPUs need about 8.5 days (checked below with `estimate` on the same design cut to 16 GPUs), so the
    smallest is 32 GPUs, 4 servers."""
    result, out = training
    best_case_days_on_8 = 6 * LLAMA3_8B_PARAMS * 1e11 / (8 * H100_BF16_DENSE_TFLOPS * 1e12) / 86400
    assert best_case_days_on_8 > 7
    smallest = _best(result, "smallest")
    assert smallest["gpus"] == 32 and smallest["servers"] == 4
    path = out / "llama3-8b-pretrain-smallest.yaml"
    assert smallest["files"][0] == path.as_posix()
    code, _, err = cli("validate", str(path))
    assert code == 0, err
    est = _json("estimate", str(path))
    assert est["time_to_train_days"] <= 7
    # the time to train is the ideal time at the step rate over the goodput (checkpoints to the storage)
    ideal = 1e11 / est["tokens_per_s"] / 86400
    assert est["time_to_train_days"] == pytest.approx(ideal / est["goodput"], rel=2e-3)
    assert est["memory_per_gpu_gb"]["total_gb"] <= H100_HBM_GB * 1.1      # TRN004 warns within its 10 % band
    design = yaml.safe_load(path.read_text(encoding="utf-8"))
    p = design["training"]["parallelism"]
    assert p["tp"] * p["pp"] * p["dp"] == 32 and design["training"]["global_batch"] % p["dp"] == 0
    # the next size down misses the deadline by the same estimate
    half = dict(design, compute={**design["compute"], "count": 2},
                training={**design["training"], "parallelism": {**p, "dp": p["dp"] // 2}})
    smaller = tmp_path / "sixteen.yaml"
    smaller.write_text(yaml.safe_dump(half, sort_keys=False), encoding="utf-8")
    assert _json("estimate", str(smaller))["time_to_train_days"] > 7
    # what the table says is what `estimate` and `bom` say of the written file
    bom = _json("bom", str(path))
    assert smallest["days"] == est["time_to_train_days"] and smallest["capex_usd"] == bom["totals"]["capex_usd"]
    assert smallest["tco_usd"] == pytest.approx(bom["tco"]["gpu_hour_usd"] * 32 * est["time_to_train_days"] * 24)


def test_training_smallest_bom(training):
    """4 DGX H100 (DGX_H100_USD each, 10.2 kW each) in one 44 kW rack; a rail-optimized fabric has one leaf per
    rail, and a DGX H100 has 8 compute NICs: 8 leaves."""
    _, out = training
    bom = _json("bom", str(out / "llama3-8b-pretrain-smallest.yaml"))
    server = _line(bom, "dgx-h100")
    assert server["qty"] == 4 and server["extended_price"] == 4 * DGX_H100_USD
    assert bom["power"]["servers_kw"] == pytest.approx(4 * DGX_H100_KW)
    assert bom["power"]["gpu_racks"] == 1
    leaves = [i for i in bom["items"] if i["category"] == "switch" and i["fabric"] == "compute"
              and i["installed_in"] == "leaf"]
    assert sum(i["qty"] for i in leaves) == 8
    assert bom["totals"]["capex_complete"]


def test_training_fastest_uses_the_whole_gpu_budget(training):
    result, out = training
    fastest = _best(result, "fastest")
    assert fastest["gpus"] == 256        # constraints.max_gpus
    assert fastest["days"] < _best(result, "smallest")["days"]
    code, _, err = cli("validate", str(out / "llama3-8b-pretrain-fastest.yaml"))
    assert code == 0, err


def test_training_rejections_name_the_rule(training):
    """TP 1 x PP 1 keeps the whole model on each GPU: it runs out of an H100's 80 GB (TRN004) but fits the
    141 GB of an H200, where the same point is not rejected for memory. Points beyond 256 GPUs are max_gpus."""
    result, _ = training
    reasons = {r["reason"]: r for r in result["rejected"]}
    assert reasons["TRN004"]["example"].startswith("dgx-h100 / ndr / TP 1 x PP 1")
    assert reasons["TRN004"]["stage"] == "workload" and f"> {H100_HBM_GB} GB HBM" in reasons["TRN004"]["message"]
    assert "dgx-h200" not in reasons["TRN004"]["example"]
    assert reasons["max_gpus"]["message"].endswith("> the 256 allowed")
    assert reasons["deadline"]["stage"] == "estimate"


# ---------------------------------------------------------------- the documented inference request


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    out = tmp_path_factory.mktemp("sized-serving")
    return _size(SERVING, "-o", str(out)), out


def test_inference_rejections_by_arithmetic(serving):
    """One H100 holds 80 GB x 0.9 (vLLM's default memory utilization) = 72 GB; Llama 3 70B in FP8 is 70.55 GB of
    weights, plus the 3.5 GB runtime reserve: a one-GPU replica does not fit (INF001). A 16-GPU replica spans
    two 8-GPU servers and the request offers no compute fabric (NET009)."""
    result, _ = serving
    assert LLAMA3_70B_PARAMS * 1 / 1e9 + 3.5 > H100_HBM_GB * 0.9
    reasons = {r["reason"]: r for r in result["rejected"]}
    assert reasons["INF001"]["example"] == "dgx-h100 / no compute fabric / TP 1 x PP 1"
    assert reasons["NET009"]["example"].endswith("TP 8 x PP 2") and reasons["NET009"]["points"] == 2
    assert LLAMA3_70B_PARAMS / 1e9 + 3.5 < H200_HBM_GB * 0.9      # on an H200 it fits: not rejected
    assert "dgx-h200 / no compute fabric / TP 1 x PP 1" in [d["label"] for d in result["designs"]]


def test_inference_smallest_meets_the_slos_and_its_bom(serving):
    result, out = serving
    smallest = _best(result, "smallest")
    assert smallest["server"] == "dgx-h100" and smallest["gpus"] == 24
    path = out / "llama3-70b-chat-smallest.yaml"
    code, _, err = cli("validate", str(path))
    assert code == 0, err
    est = _json("estimate", str(path))
    # the SLOs of the request at its load, with every GPU of 3 servers in a replica
    assert est["ttft_ms"] <= 1500 and est["tpot_ms"] <= 50 and est["fleet_capacity_qps"] >= 40
    design = yaml.safe_load(path.read_text(encoding="utf-8"))
    inf = design["inference"]
    assert inf["replicas"] * inf["replica"]["gpus"] == 24 and inf["replicas"] >= est["replicas_needed"]
    bom = _json("bom", str(path))
    assert _line(bom, "dgx-h100")["extended_price"] == 3 * DGX_H100_USD
    assert bom["power"]["servers_kw"] == pytest.approx(3 * DGX_H100_KW)
    assert math.floor(44 / DGX_H100_KW) >= 3 and bom["power"]["gpu_racks"] == 1
    assert smallest["tco_usd"] == bom["tco"]["total_usd_per_year"]
    assert smallest["ttft_ms"] == est["ttft_ms"] and smallest["tpot_ms"] == est["tpot_ms"]


def test_size_is_deterministic(training):
    result, _ = training
    assert _size(TRAINING) == {**result, "designs": [{**d, "files": []} for d in result["designs"]]}


# ---------------------------------------------------------------- brute force over a small space


def _objectives(analysis, kind: str, output_tokens: int = 0) -> dict | None:
    """The four objective figures of one analysed design, or None when it has an error."""
    if any(f.severity == "error" and not f.waived for f in analysis.findings):
        return None
    est, bom = analysis.derived.estimate.as_dict(), analysis.derived.bom
    gpus = analysis.topology.gpus
    capex = bom.totals["capex_usd"] if bom.totals["capex_complete"] else None
    if kind == "training":
        days = est["time_to_train_days"]
        return {"smallest": gpus, "capex": capex, "tco": bom.tco["gpu_hour_usd"] * gpus * days * 24, "fastest": days}
    return {"smallest": gpus, "capex": capex, "tco": bom.tco["total_usd_per_year"],
            "fastest": est["ttft_ms"] + output_tokens * est["tpot_ms"]}


def _analyse(design: dict, tmp: Path):
    path = tmp / "candidate.yaml"
    path.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    return analyze(path)


def _narrowed(request: Path, tmp: Path, **changes) -> Path:
    body = yaml.safe_load(request.read_text(encoding="utf-8"))
    for key, value in changes.items():
        section, _, field = key.partition("__")
        body.setdefault(section, {})[field] = value
    path = tmp / request.name
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


def _optimum(found: list[dict]) -> dict:
    return {o: min(f[o] for f in found if f[o] is not None) for o in ("smallest", "capex", "tco", "fastest")}


def test_training_brute_force_agrees(tmp_path):
    """DGX H100 only, TP 1-8, PP 1-2, at most 32 GPUs: every (TP, PP, DP, servers per rack) built by hand."""
    request = _narrowed(TRAINING, tmp_path, constraints__servers=["dgx-h100"], constraints__max_gpus=32,
                        search__tp=[1, 2, 4, 8], search__pp=[1, 2])
    result = _size(request)
    body = yaml.safe_load(TRAINING.read_text(encoding="utf-8"))
    c, t = body["constraints"], body["training"]
    found = []
    for tp in (1, 2, 4, 8):
        for pp in (1, 2):
            for dp in (d for d in range(1, 129) if 128 % d == 0):
                gpus = tp * pp * dp
                if gpus % 8 or gpus > 32:
                    continue
                for per_rack in range(1, min(6, gpus // 8) + 1):       # 6 x 8U in a 48U rack
                    design = {
                        "apiVersion": "clusterplan/v1", "kind": "TrainingCluster", "metadata": {"name": "brute"},
                        "site": c["site"], "compute": {"server": "dgx-h100", "count": gpus // 8,
                                                       "servers_per_rack": per_rack},
                        "fabrics": {"compute": c["fabrics"]["ndr"], "oob": c["networks"]["oob"]},
                        "storage": c["storage"],
                        "training": {"model": t["model"], "parallelism": {"tp": tp, "pp": pp, "dp": dp},
                                     "sequence_length": t["sequence_length"], "global_batch": t["global_batch"],
                                     "tokens": t["tokens"]}}
                    figures = _objectives(_analyse(design, tmp_path), "training")
                    if figures is not None and figures["fastest"] <= t["deadline_days"]:
                        found.append(figures)
    best = _optimum(found)
    assert best["smallest"] == 32
    for objective, metric in (("smallest", "gpus"), ("capex", "capex_usd"), ("tco", "tco_usd"), ("fastest", "days")):
        assert _best(result, objective)[metric] == pytest.approx(best[objective], rel=1e-9), objective


def test_inference_brute_force_agrees(tmp_path):
    """DGX H100 only, no compute fabric, TP 2, 4 or 8 in one server: for each TP the fewest servers (up to 4)
    whose fleet, every GPU in a replica, passes every rule (INF007 and INF008 judge the SLOs), at every servers
    per rack; all built by hand."""
    request = _narrowed(SERVING, tmp_path, constraints__servers=["dgx-h100"], search__tp=[2, 4, 8], search__pp=[1])
    result = _size(request)
    body = yaml.safe_load(SERVING.read_text(encoding="utf-8"))
    c, w = body["constraints"], body["inference"]
    found = []
    for tp in (2, 4, 8):
        for servers in range(1, 5):
            fleets = []
            for per_rack in range(1, min(4, servers) + 1):
                design = {
                    "apiVersion": "clusterplan/v1", "kind": "InferenceFleet", "metadata": {"name": "brute"},
                    "site": c["site"], "compute": {"server": "dgx-h100", "count": servers,
                                                   "servers_per_rack": per_rack},
                    "fabrics": c["networks"],
                    "inference": {**w, "replica": {"gpus": tp, "tp": tp}, "replicas": servers * 8 // tp}}
                figures = _objectives(_analyse(design, tmp_path), "inference", w["output_tokens"])
                if figures is not None:
                    fleets.append(figures)
            if fleets:          # a shape's fleet is the fewest servers that meet the SLOs (docs/planning.md)
                found += fleets
                break
    best = _optimum(found)
    for objective, metric in (("smallest", "gpus"), ("capex", "capex_usd"), ("tco", "tco_usd"),
                              ("fastest", "latency_ms")):
        assert _best(result, objective)[metric] == pytest.approx(best[objective], rel=1e-9), objective


# ---------------------------------------------------------------- the request and the command line


def test_bad_request_is_a_usage_error_with_lines(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: clusterplan/v1\nkind: SizingRequest\nmetadata: {name: x}\n"
                   "training: {model: llama3-8b, tokens: 1e9, sequence_length: 8192, global_batch: 8, colour: red}\n"
                   "constraints: {servers: [dgx-h100], site: {rack: {power_budget_kw: 44, cooling: air}}}\n",
                   encoding="utf-8")
    code, out, err = cli("size", str(bad))
    assert code == 2 and out == ""
    assert "bad.yaml:4:" in err and "training.colour" in err


def test_training_needs_a_deadline_or_a_gpu_budget(tmp_path):
    body = yaml.safe_load(TRAINING.read_text(encoding="utf-8"))
    del body["training"]["deadline_days"], body["constraints"]["max_gpus"]
    request = tmp_path / "request.yaml"
    request.write_text(yaml.safe_dump(body), encoding="utf-8")
    code, _, err = cli("size", str(request))
    assert code == 2 and "deadline_days" in err and "max_gpus" in err


def test_nothing_feasible_exits_1_and_says_why():
    code, out, _ = cli("size", rel(TRAINING), "--deadline-days", "0.01", "--server", "dgx-h100")
    assert code == 1
    assert "no design meets the request" in out and "deadline" in out


def test_unknown_server_is_named():
    code, _, err = cli("size", rel(TRAINING), "--server", "dgx-h1000")
    assert code == 2 and "unknown server 'dgx-h1000'" in err and "dgx-h100" in err


def test_validate_skips_sizing_requests():
    """A request declares `apiVersion: clusterplan/v1` too; a directory walk must not read it as a design."""
    code, _, err = cli("validate", "sizing")
    assert code == 2 and "no design files found" in err


def test_documented_requests_match_the_generated_schema():
    from jsonschema import Draft202012Validator

    from validator.read.loader import load_yaml

    schema = json.loads((ROOT / "schemas" / "clusterplan-sizing.schema.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    for path in sorted((ROOT / "sizing").glob("*.yaml")):
        data = load_yaml(path.read_text(encoding="utf-8"), path.name).data
        assert [e.message for e in validator.iter_errors(data)] == [], path.name
    assert [e.message for e in validator.iter_errors({"apiVersion": "clusterplan/v1", "kind": "SizingRequest"})]
