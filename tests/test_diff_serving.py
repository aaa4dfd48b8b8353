"""`clusterplan diff` on a prefill/decode-disaggregated design: the prefill pool is part of the diff.

The design is designs/inference-deepseek-v3-pd-h100.yaml (1 prefill replica of 32 GPUs, 1 decode replica of
72). Raising its target load from 80 to 120 requests/s needs a second prefill replica (INF008 says so with
the count); the diff must show that row in every format, and leave the aggregated metrics as they were.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import ROOT

DESIGN = ROOT / "designs" / "inference-deepseek-v3-pd-h100.yaml"
ROW = "prefill replicas needed at the SLOs"


@pytest.fixture(scope="module")
def raised(tmp_path_factory):
    from validator.workflows.diff import compare

    tmp = tmp_path_factory.mktemp("pd")
    text = DESIGN.read_text()
    assert "targets: {qps: 80," in text
    (tmp / "base.yaml").write_text(text)
    (tmp / "head.yaml").write_text(text.replace("targets: {qps: 80,", "targets: {qps: 120,"))
    return compare(tmp / "base.yaml", tmp / "head.yaml", "d.yaml")


def test_raising_the_load_of_a_pd_design_shows_the_prefill_replicas_row(raised):
    from validator.workflows.diff_report import diff_json, diff_markdown, diff_text

    head_needed = raised.head.analysis.derived.estimate.inference.prefill_replicas_needed
    assert raised.value(raised.base, "prefill_replicas_needed") == 1
    assert head_needed is not None and head_needed >= 2
    assert raised.value(raised.head, "prefill_replicas_needed") == head_needed
    # the decode pool is unchanged (same replica, same step): only the prefill pool grows
    assert raised.delta("replicas_needed") == (0, 0.0)
    text = diff_text([raised], [])
    line = next(ln for ln in text.splitlines() if ROW in ln)
    assert line.split()[-5:-1] == ["1", "->", str(head_needed), f"+{head_needed - 1}"], line
    assert "INF008" in text and f"needs {head_needed}" in text
    md = diff_markdown([raised], [])
    assert f"| {ROW} |" in md and f"| {ROW} | 1 | {head_needed} |" in md
    metrics = json.loads(diff_json([raised], []))["designs"][0]["metrics"]
    assert metrics["prefill_replicas_needed"] == {"base": 1, "head": head_needed, "change": head_needed - 1,
                                                  "relative": head_needed - 1}
    for key in ("prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu"):
        assert metrics[key]["base"] is not None and metrics[key]["change"] == 0


def test_a_latency_that_becomes_unknown_is_shown(raised):
    from validator.workflows.diff_report import diff_text

    # one prefill replica cannot carry 120 requests/s: the head's TTFT is unknown (overloaded), not dropped
    assert raised.value(raised.head, "ttft_ms") is None and raised.value(raised.base, "ttft_ms") is not None
    assert any(ln.strip().startswith("TTFT (ms)") and ln.rstrip().endswith("n/a")
               for ln in diff_text([raised], []).splitlines())


def test_aggregated_designs_have_no_prefill_rows():
    from validator.pipeline import analyze
    from validator.workflows.diff import metrics_of

    path = ROOT / "designs" / "inference-h200-llama3-70b.yaml"     # aggregated: no disaggregation block
    assert "disaggregation" not in path.read_text()
    metrics = metrics_of(analyze(path, path.name))
    assert metrics.get("replicas_needed") is not None
    assert not {"prefill_replicas_needed", "prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu"} & set(metrics)
