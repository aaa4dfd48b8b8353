"""`clusterplan sweep`: each row equals `validate`, `estimate` and `bom` run on the same modified design
written to a file; the grid and zip orders; bad paths, bad values and oversized grids are usage errors
(exit 2); the table formats."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.helpers import DESIGNS, cli, rel
from validator.base.errors import ToolError
from validator.workflows.sweep import grid, parse_setting

TRAINING = DESIGNS / "roce-h100-2tier.yaml"
SERVING = DESIGNS / "inference-h200-llama3-70b.yaml"


def _single_runs(design: dict, tmp: Path) -> dict:
    """What the single commands say of one design written to a file."""
    path = tmp / "point.yaml"
    path.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    code, out, _ = cli("validate", str(path), "--format", "json")
    findings = json.loads(out)["files"][0]["findings"]
    result = {"errors": sum(f["severity"] == "error" for f in findings),
              "warnings": sum(f["severity"] == "warning" for f in findings),
              "error_rules": " ".join(sorted({f["rule"] for f in findings if f["severity"] == "error"}))}
    code, out, err = cli("estimate", str(path), "--format", "json")
    assert code == 0, err
    result["estimate"] = json.loads(out)
    code, out, err = cli("bom", str(path), "--format", "json")
    assert code == 0, err
    result["bom"] = json.loads(out)
    return result


def _sweep_json(*args: str) -> dict:
    code, out, err = cli("sweep", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_training_grid_rows_equal_single_runs(tmp_path):
    """2 x 2 grid, first --set slowest; run on 2 worker processes. At 128 servers (1,024 GPUs) DP 64 x TP 8 x
    PP 4 = 2,048 GPUs is more than the cluster has: that point carries TRN005, as `validate` says."""
    result = _sweep_json(rel(TRAINING), "--set", "compute.count=128,256", "--set", "training.parallelism.dp=32,64",
                         "--jobs", "2")
    base = yaml.safe_load(TRAINING.read_text(encoding="utf-8"))
    points = [(128, 32), (128, 64), (256, 32), (256, 64)]
    assert [(r["compute.count"], r["training.parallelism.dp"]) for r in result["rows"]] == points
    assert [r["point"] for r in result["rows"]] == [1, 2, 3, 4]
    for row, (count, dp) in zip(result["rows"], points, strict=True):
        design = yaml.safe_load(yaml.safe_dump(base))
        design["compute"]["count"] = count
        design["training"]["parallelism"]["dp"] = dp
        single = _single_runs(design, tmp_path)
        est, bom = single["estimate"], single["bom"]
        assert row["gpus"] == 8 * count
        assert (row["errors"], row["warnings"], row["error_rules"]) == \
            (single["errors"], single["warnings"], single["error_rules"])
        assert est["valid"] == (single["errors"] == 0)
        assert row["capex_usd"] == bom["totals"]["capex_usd"] and bom["totals"]["capex_complete"]
        assert row["it_kw"] == bom["power"]["it_kw"] and row["facility_kw"] == bom["power"]["facility_kw"]
        assert row["gpu_hour_usd"] == bom["tco"]["gpu_hour_usd"]
        assert row["withheld"] == bool(single["errors"])
        if single["errors"]:    # a point that fails its rules is marked, not measured
            assert all(row[k] is None for k in ("mfu", "tokens_per_s", "time_to_train_days", "cost_per_million_tokens"))
            continue
        assert row["mfu"] == est["mfu"] and row["tokens_per_s"] == est["tokens_per_s"]
        assert row["time_to_train_days"] == est["time_to_train_days"]
        # training cost per million tokens: a busy GPU-hour over the tokens one GPU trains in an hour
        expected = bom["tco"]["gpu_hour_usd"] / (est["tokens_per_s_per_gpu"] * 3600 / 1e6)
        assert row["cost_per_million_tokens"] == pytest.approx(expected, rel=1e-12)
    assert [r["error_rules"] for r in result["rows"]] == ["", "TRN005", "", ""]


def test_inference_zip_rows_equal_single_runs(tmp_path):
    """--zip pairs the i-th values: (10 qps, fp8) and (80 qps, bf16) only."""
    result = _sweep_json(rel(SERVING), "--zip", "--set", "inference.targets.qps=10,80",
                         "--set", "inference.weight_precision=fp8,bf16", "--jobs", "1")
    assert result["mode"] == "zip"
    assert [(r["inference.targets.qps"], r["inference.weight_precision"]) for r in result["rows"]] == \
        [(10, "fp8"), (80, "bf16")]
    base = yaml.safe_load(SERVING.read_text(encoding="utf-8"))
    for row in result["rows"]:
        design = yaml.safe_load(yaml.safe_dump(base))
        design["inference"]["targets"]["qps"] = row["inference.targets.qps"]
        design["inference"]["weight_precision"] = row["inference.weight_precision"]
        single = _single_runs(design, tmp_path)
        est, bom = single["estimate"], single["bom"]
        for key in ("output_tokens_per_s_per_gpu", "ttft_ms", "tpot_ms", "replicas_needed", "cost_per_million_tokens"):
            assert row[key] == est[key], key
        assert row["capex_usd"] == bom["totals"]["capex_usd"] and row["gpus"] == 16 * 8
        assert row["errors"] == single["errors"]


def test_a_point_whose_design_cannot_be_read_is_a_row_with_its_errors():
    """A value of the wrong type is the point's problem (a schema error), not the sweep's."""
    code, out, err = cli("sweep", rel(TRAINING), "--set", "compute.count=256,many", "-j", "1", "-f", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["compute.count"] for r in rows] == ["256", "many"]
    assert rows[0]["errors"] == "0" and rows[0]["gpus"] == "2048"
    assert rows[1]["errors"] == "1" and rows[1]["gpus"] == "" and rows[1]["error_rules"].startswith("SCH")


@pytest.mark.parametrize(("setting", "message"), [
    ("compute.cnt=1,2", "compute.cnt: no such field"),
    ("compute=1", "names a section"),
    ("fabrics.compute.speed_gbps.x=1", "is a value"),
    ("waivers[0].rule=TRN001", "the design has 0 item(s)"),
    ("compute.count={a: 1}", "not a scalar"),
    ("compute.count", "expected PATH=V1,V2"),
    ("../etc/passwd=1", "not a field name"),
    ("compute.count=1,null", "not a scalar"),
])
def test_bad_paths_and_values_are_usage_errors(setting, message):
    code, out, err = cli("sweep", rel(TRAINING), "--set", setting)
    assert code == 2 and out == ""
    assert message in err


def test_the_grid_is_bounded_before_anything_runs():
    values = ",".join(str(i) for i in range(1, 101))
    code, _, err = cli("sweep", rel(TRAINING), "--set", f"compute.count={values}",
                       "--set", f"fabrics.compute.speed_gbps={values}", "--set", "training.global_batch=1,2")
    assert code == 2 and "20,000 points; the limit is 10,000" in err


def test_grid_order_and_zip_lengths():
    a, b = parse_setting("x.a=1,2"), parse_setting("x.b=u,v,w")
    assert grid([a, b], zipped=False) == [(1, "u"), (1, "v"), (1, "w"), (2, "u"), (2, "v"), (2, "w")]
    with pytest.raises(ToolError, match="same number of values"):
        grid([a, b], zipped=True)
    assert parse_setting("waivers[2].expires=2027-01-01").path == ("waivers", 2, "expires")
    assert parse_setting("fabrics.compute.oversubscription=1:1,2:1").values == ("1:1", "2:1")


def test_text_and_xlsx_tables():
    code, out, _ = cli("sweep", rel(SERVING), "--set", "inference.targets.qps=10,40", "-j", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("designs/inference-h200-llama3-70b.yaml: 2 points (grid of inference.targets.qps)")
    assert lines[1].split()[:3] == ["#", "inference.targets.qps", "GPUs"]
    assert [line.split()[:3] for line in lines[2:4]] == [["1", "10", "128"], ["2", "40", "128"]]


def test_xlsx_is_one_sheet_and_reproducible(tmp_path):
    out1, out2 = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    for out in (out1, out2):
        code, _, err = cli("sweep", rel(SERVING), "--set", "inference.targets.qps=10,40", "-j", "1",
                           "-f", "xlsx", "-o", str(out))
        assert code == 0, err
    assert out1.read_bytes() == out2.read_bytes()
    from openpyxl import load_workbook

    ws = load_workbook(out1).active
    rows = list(ws.iter_rows(values_only=True))
    assert ws.title == "Sweep" and rows[0][:3] == ("#", "inference.targets.qps", "GPUs")
    assert [r[:3] for r in rows[1:]] == [(1, 10, 128), (2, 40, 128)]
    assert zipfile.ZipFile(out1).testzip() is None


def test_progress_of_the_points_on_stderr(monkeypatch):
    """With progress on (no delay; not a terminal here, so plain lines) the sweep counts its points on
    stderr and the designs inside it show no stages of their own; the table on stdout is unchanged
    (tests/test_progress.py drives the terminal display)."""
    _, plain, _ = cli("sweep", rel(SERVING), "--set", "inference.targets.qps=10,40", "-j", "1", "-f", "csv")
    monkeypatch.delenv("CLUSTERPLAN_NO_PROGRESS")
    monkeypatch.setenv("CLUSTERPLAN_PROGRESS_AFTER", "0")
    code, out, err = cli("sweep", rel(SERVING), "--set", "inference.targets.qps=10,40", "-j", "1", "-f", "csv")
    assert code == 0 and out == plain
    assert re.search(r"^clusterplan: sweep \(points\) 2/2 \(\d+ s\) done$", err, re.MULTILINE), err
    assert "derive and check" not in err


def test_a_point_with_errors_shows_fails_not_figures():
    """128 servers x 8 = 1,024 GPUs cannot hold DP 64 x TP 8 x PP 4 = 2,048 (TRN005): the row says `fails`
    in every performance column and the footnote says why, instead of printing an MFU for a job that cannot run."""
    code, out, _ = cli("sweep", rel(TRAINING), "--set", "training.parallelism.dp=32,64", "--set", "compute.count=128",
                       "-j", "1")
    assert code == 0
    lines = out.splitlines()
    ok, bad = lines[2].split(), lines[3].split()
    assert "TRN005" in bad and "TRN005" not in ok
    assert bad.count("fails") == 4 and "fails" not in ok    # MFU, tokens/s, days, $/Mtok
    assert any(cell.endswith("%") for cell in ok) and not any(cell.endswith("%") for cell in bad)
    assert any(line.startswith("fails: the point has error findings") for line in lines)
