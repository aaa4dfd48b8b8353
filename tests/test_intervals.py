"""The interval beside every headline estimate (validator/derive/estimate/interval.py): it comes from
the held-out error of published runs of the same kind (validator/data/intervals.yaml), contains the
estimate, says when a configuration lies outside every fitted run, and covers the published value of
held-out serving points whose source never contributed to it."""

from __future__ import annotations

import copy
import json
import math

import jsonschema
import pytest
import yaml

from benchmarks.intervals import band, coverage, serving_points
from tests.builders import topology_of
from tests.helpers import ROOT
from validator.base.resources import load_data
from validator.derive.estimate import estimate

DESIGNS = sorted((ROOT / "designs").glob("*.yaml"))
HEADLINE = {"training": ("step_time_s", "mfu", "tokens_per_s"),
            "inference": ("output_tokens_per_s_per_gpu", "total_tokens_per_s_per_gpu", "fleet_capacity_qps",
                          "requests_per_s_per_replica", "ttft_ms", "tpot_ms")}


def _design(name: str) -> dict:
    return yaml.safe_load((ROOT / "designs" / f"{name}.yaml").read_text())


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.stem)
def test_every_headline_figure_has_an_interval_around_it(path):
    est = estimate(topology_of(yaml.safe_load(path.read_text()))).as_dict()
    intervals = est["trust"]["intervals"]
    for key in HEADLINE[est["kind"]]:
        if est[key] is None:                     # overloaded: no latency, no interval
            assert key not in intervals
            continue
        low, high = intervals[key]
        assert low < high, key
        assert low <= est[key] * (1 + 1e-3) and est[key] <= high * (1 + 1e-3), (key, est[key], low, high)
    if est["kind"] == "training":
        assert intervals["mfu"][1] <= 1.0


def test_training_interval_is_the_held_out_band_of_its_class():
    # b300 dual-plane: a dense model on calibrated constants -> the `dense` class of intervals.yaml;
    # published = estimated x r, so step time [t r_low, t r_high] and MFU [m / r_high, m / r_low]
    cls = load_data("intervals.yaml")["training"]["classes"]["dense"]
    e = estimate(topology_of(_design("b300-spectrum-x-dual-plane")))
    assert e.training is not None and e.trust is not None
    t, m = e.training.estimate.step_time_s, e.training.estimate.mfu
    assert e.trust.intervals["step_time_s"] == pytest.approx((t * cls["low"], t * cls["high"]))
    assert e.trust.intervals["mfu"] == pytest.approx((m / cls["high"], m / cls["low"]))
    assert "dense: 5th-95th percentile" in e.trust.basis and f"{cls['n']} published runs" in e.trust.basis
    assert e.trust.outside_fit == ()


def test_a_configuration_beyond_the_fitted_runs_says_so():
    env = load_data("intervals.yaml")["training"]["envelope"]
    design = _design("superpod-h100-4su")
    design["training"]["sequence_length"] = 4 * int(env["sequence_length"][1])
    outside = estimate(topology_of(design)).as_dict()["trust"]["outside_fit"]
    assert any(why.startswith("sequence_length") for why in outside), outside


def test_a_prompt_longer_than_every_fitted_run_is_outside_the_fit():
    design = _design("inference-h200-llama3-70b")
    inside = estimate(topology_of(copy.deepcopy(design))).as_dict()["trust"]["outside_fit"]
    assert inside == []
    design["inference"]["prompt_tokens"] = 100_000
    design["inference"]["max_context_tokens"] = 131_072
    outside = estimate(topology_of(design)).as_dict()["trust"]["outside_fit"]
    assert any(why.startswith("prompt_tokens 100000") for why in outside), outside


def test_band_is_the_quantiles_of_the_ratios():
    # 21 ratios 0.80, 0.82, ..., 1.20: the 5th percentile sits at index 1 (0.82), the 95th at 19 (1.18)
    values = [0.80 + 0.02 * i for i in range(21)]
    assert band(values) == pytest.approx((0.82, 1.18))


# Serving classes whose held-out points fall inside the interval built from the other sources at least
# 80 % of the time (issue 32's target); the others are recorded below as strict expected failures.
# TPOT and TTFT reach it with InferenceX's DeepSeek-R1 B200 sweep as a third source (4 TTFT and 4 TPOT
# points): TPOT 11 of 13, TTFT 14 of 16, the TTFT band being the lowest-highest of very wide errors (0.94-27x:
# the model's TTFT of DeepSeek prefill under SGLang and vLLM is 6-27x too short).
COVERED = ("throughput_dense", "throughput_moe", "tpot", "ttft")
MISSED: dict[str, str] = {}


@pytest.mark.parametrize("cls", [*COVERED, *[pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=why))
                                             for c, why in MISSED.items()]])
def test_serving_interval_covers_held_out_sources(cls):
    points = serving_points()
    n, inside, _ = coverage(points)[cls]
    assert n >= 5 and inside / n >= 0.80, (cls, n, inside)


def test_serving_points_are_the_held_out_rows_only():
    ids = [p[2] for p in serving_points()]
    assert ids and not any(i.startswith(("S-TRT10-", "S-TRTNEW-B200-DSR1-")) for i in ids)
    assert all(math.isfinite(p[3]) and p[3] > 0 for p in serving_points())


def test_estimate_marks_a_configuration_that_fails_a_blocking_rule():
    # tests/rules/INF001/fail.yaml: Llama 3.1 405B in bf16 (811.7 GB) on one H200 does not fit (INF001)
    from tests.helpers import cli, rel

    code, out, err = cli("estimate", rel(ROOT / "tests" / "rules" / "INF001" / "fail.yaml"), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["valid"] is False and [b["rule"] for b in data["blocked_by"]] == ["INF001"]
    assert data["blocked_by"][0]["line"] == 27
    jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / "estimate.schema.json").read_text())).validate(data)
    code, out, _ = cli("estimate", rel(ROOT / "tests" / "rules" / "INF001" / "fail.yaml"))
    assert out.splitlines()[1].startswith("  NOT VALID: the design fails INF001")
    code, out, _ = cli("estimate", rel(ROOT / "designs" / "inference-h200-llama3-70b.yaml"), "--format", "json")
    assert json.loads(out)["valid"] is True and "NOT VALID" not in cli("estimate", rel(
        ROOT / "designs" / "inference-h200-llama3-70b.yaml"))[1]
