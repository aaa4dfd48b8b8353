"""Prompt caching in one unit: a prefill pool computes only the uncached share of each prompt, and its
request rate is that token rate over the same uncached share (issue 32: dividing by the full prompt
understated a DeepSeek P/D prefill pool with 56.3 % cache hits 2.3x, and INF008 rejected the
production layout). The layout is tests/fixtures/published/deepseek-production-pd.yaml, built from
DeepSeek's day-6 inference system overview (the arithmetic is in its header)."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import FIXTURES, ROOT, cli, rel
from validator.derive.estimate.inference import pools
from validator.derive.estimate.operating import prefill_rate, prefill_requests

LAYOUT = FIXTURES / "published" / "deepseek-production-pd.yaml"


def _prefill_pool():
    topology = topology_of(yaml.safe_load(LAYOUT.read_text()))
    pre = pools(topology)[0]
    return pre.setup, pre.workload


def test_prefill_requests_count_cached_tokens_in_neither_unit():
    s, w = _prefill_pool()
    assert s.engine.prefix_hit == pytest.approx(0.563)
    tokens_per_s, _ = prefill_rate(s, w)       # uncached prompt tokens per second
    fresh = w.prompt * (1 - 0.563)             # 4,383 x 0.437 = 1,915 uncached tokens per prompt
    assert prefill_requests(s, w) == pytest.approx(tokens_per_s / fresh)
    assert prefill_requests(s, w) == pytest.approx(tokens_per_s / w.prompt / (1 - 0.563))   # 2.29x the old


def test_production_prefill_pool_carries_the_published_load():
    # 24 prefill units of 4 nodes (96 nodes; DeepSeek's average was 7.04M / 73.7k = 95.5 prefill nodes)
    # carry the average 1,605 requests/s: the prefill pool needs no more than its 24 replicas.
    code, out, err = cli("estimate", rel(LAYOUT), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["prefill_replicas_needed"] is not None and data["prefill_replicas_needed"] <= 24
    assert data["prefill_replicas_planned"] == 24


def test_production_layout_validates():
    # the engine is DeepSeek's own (`deepseek`: FlashMLA decode attention, the decode all-to-all beside the
    # other micro-batch's attention; tests/test_serving_deepseek_engine.py). With the public engines'
    # fitted constants (`sglang`) the decode pool needed 11 EP144 units where DeepSeek ran 8.
    _, out, _ = cli("validate", rel(LAYOUT), "--format", "json")
    findings = json.loads(out)["files"][0]["findings"]
    assert [f["rule"] for f in findings if f["severity"] == "error"] == []


def test_production_estimate_matches_the_estimate_schema():
    # the `deepseek` engine is a value of the estimate's JSON schema too
    code, out, err = cli("estimate", rel(LAYOUT), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["engine"] == "deepseek"
    schema = json.loads((ROOT / "schemas" / "estimate.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
