"""Figures that cannot be computed say why, and where a stated assumption can serve, it is used and shown.

A training design that gives no storage write bandwidth still gets a time to train: its checkpoint storage is
assumed sized to the checkpoint write target (the target TRN008 checks declared storage against), and the
estimate says so. The Young/Daly goodput is recomputed here by hand from validator/data/reliability.yaml.
"""

from __future__ import annotations

import json
import math

import pytest
import yaml

from tests.helpers import DESIGNS, cli

ROCE = DESIGNS / "roce-h100-2tier.yaml"
RELIABILITY = yaml.safe_load((DESIGNS.parent / "validator" / "data" / "reliability.yaml").read_text(encoding="utf-8"))


def _estimate(tmp_path, design: dict) -> dict:
    path = tmp_path / "design.yaml"
    path.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    code, out, err = cli("estimate", str(path), "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_time_to_train_without_storage_assumes_the_checkpoint_target(tmp_path):
    design = yaml.safe_load(ROCE.read_text(encoding="utf-8"))
    del design["storage"]["write_gbytes_s"], design["storage"]["read_gbytes_s"]
    est = _estimate(tmp_path, design)
    target_s = design["training"]["checkpoint"]["write_target_s"]           # 300 s in the example
    assert "300 s" in est["assumptions"]["checkpoint_storage"]
    assert est["reliability"]["checkpoint_write_s"] == pytest.approx(target_s, rel=1e-3)
    # Young/Daly by hand: lambda per hour for the job, delta and restart in hours, Young's optimum interval
    gpus = design["compute"]["count"] * 8
    lam = RELIABILITY["interruptions_per_gpu_hour"]["value"] * gpus
    delta = target_s / 3600
    restart = RELIABILITY["restart_minutes"]["value"] / 60 + target_s / 3600   # read back at the write rate
    tau = math.sqrt(2 * delta / lam)
    goodput = 1 / (1 + delta / tau + lam * (restart + (tau + delta) / 2))
    assert est["goodput"] == pytest.approx(goodput, rel=2e-3)
    assert est["time_to_train_days"] == pytest.approx(est["time_to_train_ideal_days"] / goodput, rel=3e-3)


def test_declared_storage_is_not_an_assumption():
    code, out, _ = cli("estimate", str(ROCE), "--format", "json")
    assert code == 0
    assert "checkpoint_storage" not in json.loads(out)["assumptions"]


def test_no_token_budget_is_the_reason_given(tmp_path):
    design = yaml.safe_load(ROCE.read_text(encoding="utf-8"))
    del design["training"]["tokens"]
    est = _estimate(tmp_path, design)
    assert est["time_to_train_days"] is None
    assert "training.tokens" in est["assumptions"]["time_to_train"]
    code, out, _ = cli("estimate", str(tmp_path / "design.yaml"))
    assert code == 0
    assert "n/a (the design gives no training.tokens" in out
