"""Serving estimator: published operating points (tests/reference/serving-runs.csv, each row citing its
source), the KV closed form, and the monotonicity and ordering invariants of the step and queueing
models."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.serving_published import cases, error
from validator.derive.estimate.fleet import Slo, capacity
from validator.derive.estimate.kv import kv_capacity
from validator.derive.estimate.operating import decode_rate, max_load, prefill_rate, static_batch
from validator.derive.estimate.queueing import aggregated, decode_pool, prefill_pool
from validator.read.model import Inference
from validator.resolve.catalog import builtin_catalog

CASES = {c.id: c for c in cases()}

# Published figures pinned, with the tolerance each is held to (the held-out bound, 25 %, unless
# tighter). Source of each: the row's `source` and `source_url` columns in tests/reference/serving-runs.csv.
PINNED = {
    # dense, aggregated, max-load output tokens/s per GPU (TensorRT-LLM perf overview, newest edition)
    "S-TRTNEW-H200-L70-TP2-1000-1000": 0.10, "S-TRTNEW-H200-L70-TP2-8192-1024": 0.10,
    "S-TRTNEW-H100-L70-TP2-1000-1000": 0.10, "S-TRTNEW-B200-L70-TP1-1024-1024": 0.10,
    "S-TRTNEW-GB200-L70-TP1-8192-1024": 0.15, "S-TRTNEW-B200-L70-TP1-32768-1024": 0.15,
    # dense, aggregated (TensorRT-LLM v1.0 edition, total per instance / TP)
    "S-TRT10-H100-L405-TP8-1000-1000": 0.10, "S-TRT10-H200-L8-TP1-1000-1000": 0.10,
    # MoE (DeepSeek-R1, attention DP + EP), aggregated
    "S-TRTNEW-GB200-DSR1-DEP4-1024-1024": 0.10, "S-TRTNEW-GB200-DSR1-DEP4-8192-1024": 0.15,
    # MoE, disaggregated prefill (input tokens/s per GPU) and decode (output tokens/s per GPU)
    "S-SGL-H100-DSV3-PREFILL-EP32-2000": 0.10, "S-VWEP-H200-DSR1-PREFILL-EP16": 0.10,
    "S-SGL-H100-DSV3-DECODE-EP72-2000": 0.10, "S-VWEP-H200-DSR1-DECODE-EP32": 0.10,
    "S-VWEP-H200-DSR1-DECODE-EP72": 0.15,
    # MoE attention DP + EP on Hopper with TensorRT-LLM, whose expert all-gather / reduce-scatter runs in
    # the compute stream (validator/data/serving.yaml `moe_communication`; misses of 31 % and 48 % before)
    "S-TRTNEW-H200-DSR1-DEP8-1024-8192": 0.10, "S-TRTDS-H200-DSR1-DEP8-1024-2048": 0.25,
    # dense, aggregated, latency at load: mean TPOT at a Poisson rate (vLLM v0.6.0) and max-load req/s
    "S-V06-H100-L70-SGPT-TPOT-QPS2": 0.10,
    "S-V06-H100-L70-SGPT-TPOT-QPS8": 0.10, "S-V06-H100-L70-DEC-THR": 0.10, "S-V06-H100-L8-DEC-THR": 0.10,
}


# Held-out points the model misses. vLLM v0.6.0's Llama 3 8B mean TPOT at 32 QPS was -8.9 % and is
# -11.0 % since the refit that came with TensorRT-LLM's exposed expert all-gather (issue 32): the Hopper
# step cost fell 3.69 -> 3.21 ms (in-sample objective 0.090 -> 0.089); this held-out row is never fitted.
MISSED = {
    "S-V06-H100-L8-SGPT-TPOT-QPS32": (0.10, "vLLM v0.6 Llama 3 8B TPOT at 32 QPS: under-estimated by 11 %"),
}


@pytest.mark.parametrize("row_id", sorted(PINNED))
def test_published_operating_point(row_id):
    err = error(CASES[row_id])
    assert abs(err) <= PINNED[row_id], f"{row_id}: {err:+.3f} beyond {PINNED[row_id]}"


@pytest.mark.parametrize("row_id", [pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=why))
                                    for r, (_, why) in sorted(MISSED.items())])
def test_published_operating_point_missed(row_id):
    err = error(CASES[row_id])
    assert abs(err) <= MISSED[row_id][0], f"{row_id}: {err:+.3f} beyond {MISSED[row_id][0]}"


def test_pinned_points_cover_dense_and_moe_aggregated_and_disaggregated():
    kinds = {(CASES[r].setup.model.moe is not None, CASES[r].kind) for r in PINNED}
    assert {(False, "aggregated"), (True, "aggregated"), (True, "prefill"), (True, "decode"),
            (False, "load")} <= kinds
    assert len(PINNED) >= 15 and not set(PINNED) & set(MISSED)


def _inference(**kw) -> Inference:
    base = {"model": "llama3-70b", "replica": {"gpus": 8, "tp": 8}, "replicas": 1, "prompt_tokens": 1024,
            "output_tokens": 256, "max_context_tokens": 8192}
    return Inference.model_validate({**base, **kw})


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hbm=st.floats(40, 300), ctx=st.integers(256, 32768), tp=st.sampled_from([1, 2, 4, 8]),
       dp=st.sampled_from([1, 2, 4]))
def test_kv_concurrency_equals_the_closed_form(hbm, ctx, tp, dp):
    # Llama-3-70B bf16: 80 layers x 2 (K and V) x max(1, 8 KV heads / TP) x 128 x 2 B per token per GPU
    model = builtin_catalog().model("llama3-70b")
    inf = _inference(max_context_tokens=ctx, kv_precision="bf16")
    cap = kv_capacity(model, inf, hbm, 0.9, 3.5, tp, 1, tp * dp, 1, dp)
    per_gpu = 80 * 2 * max(1, 8 // tp) * 128 * 2
    blocks = int(max(0.0, hbm * 0.9 - cap.weights_gb - 3.5) * 1e9 // (per_gpu * 16))
    assert cap.kv_bytes_per_token_per_gpu == per_gpu
    assert cap.max_concurrency == dp * (blocks // math.ceil(ctx / 16))


def test_deepseek_mla_kv_is_one_latent_per_layer():
    # (512 + 64) x 61 layers x 2 B = 70,272 B per token, whole on every TP rank
    model = builtin_catalog().model("deepseek-v3")
    cap = kv_capacity(model, _inference(model="deepseek-v3", kv_precision="bf16"), 80, 0.9, 3.5, 8, 1, 8)
    assert cap.kv_bytes_per_token == 70_272 and cap.kv_bytes_per_token_per_gpu == 70_272


AGG = [c for c in CASES.values() if c.kind == "aggregated" and c.metric != "req_s"]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(case=st.sampled_from(AGG), grow=st.floats(1.0, 8.0))
def test_throughput_never_rises_with_longer_prompts_or_outputs(case, grow):
    base = max_load(case.setup, case.workload).requests_per_s
    longer_prompt = dataclasses.replace(case.workload, prompt=case.workload.prompt * grow)
    longer_output = dataclasses.replace(case.workload, output=case.workload.output * grow)
    assert max_load(case.setup, longer_prompt).requests_per_s <= base * (1 + 1e-9)
    assert max_load(case.setup, longer_output).requests_per_s <= base * (1 + 1e-9)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(case=st.sampled_from(AGG), share=st.floats(0.01, 0.99))
def test_latency_percentiles_are_ordered(case, share):
    lam = max_load(case.setup, case.workload).requests_per_s * share
    lat = aggregated(case.setup, case.workload, lam)
    if lat is None:
        return
    assert lat.ttft_p50_s <= lat.ttft_p99_s and lat.tpot_p50_s <= lat.tpot_p99_s
    faster = aggregated(case.setup, case.workload, lam / 2)
    assert faster is not None and faster.tpot_p99_s <= lat.tpot_p99_s * (1 + 1e-9)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=st.sampled_from(AGG), tpot=st.floats(0.005, 0.5), tighter=st.floats(0.3, 1.0))
def test_capacity_never_rises_when_the_slo_tightens(case, tpot, tighter):
    ceiling = max_load(case.setup, case.workload).requests_per_s

    def lat(x: float):
        return aggregated(case.setup, case.workload, x)

    loose = capacity(lat, 4, Slo(tpot_p99_s=tpot), ceiling)
    strict = capacity(lat, 4, Slo(tpot_p99_s=tpot * tighter), ceiling)
    assert strict <= loose * (1 + 1e-9)


def _lat_at(case, lam):
    return aggregated(case.setup, case.workload, lam)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=st.sampled_from(AGG), ttft=st.floats(0.02, 5.0), tighter=st.floats(0.3, 1.0), p50=st.booleans())
def test_capacity_never_rises_when_the_ttft_slo_tightens(case, ttft, tighter, p50):
    ceiling = max_load(case.setup, case.workload).requests_per_s
    key = "ttft_p50_s" if p50 else "ttft_p99_s"
    loose = capacity(lambda x: _lat_at(case, x), 4, Slo(**{key: ttft}), ceiling)
    strict = capacity(lambda x: _lat_at(case, x), 4, Slo(**{key: ttft * tighter}), ceiling)
    assert strict <= loose * (1 + 1e-9)


PREFILL = [c for c in CASES.values() if c.kind == "prefill"]
DECODE = [c for c in CASES.values() if c.kind == "decode"]


def _prefill_ceiling(case) -> float:
    return prefill_rate(case.setup, case.workload)[0] / case.workload.prompt


@settings(max_examples=20, deadline=None, derandomize=True)
@given(case=st.sampled_from(PREFILL), ttft=st.floats(0.05, 5.0), tighter=st.floats(0.3, 1.0))
def test_prefill_pool_capacity_never_rises_when_the_ttft_slo_tightens(case, ttft, tighter):
    def lat(x: float):
        return prefill_pool(case.setup, case.workload, x)

    ceiling = _prefill_ceiling(case)
    assert capacity(lat, 2, Slo(ttft_p99_s=ttft * tighter), ceiling) <= capacity(lat, 2, Slo(ttft_p99_s=ttft),
                                                                                  ceiling) * (1 + 1e-9)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(case=st.sampled_from(PREFILL), share=st.floats(0.01, 0.99))
def test_prefill_pool_percentiles_are_ordered(case, share):
    lam = _prefill_ceiling(case) * share
    lat = prefill_pool(case.setup, case.workload, lam)
    assert lat is not None and lat.ttft_p50_s <= lat.ttft_p99_s
    lighter = prefill_pool(case.setup, case.workload, lam / 2)
    assert lighter is not None and lighter.ttft_p99_s <= lat.ttft_p99_s * (1 + 1e-9)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(case=st.sampled_from(DECODE), share=st.floats(0.01, 0.99))
def test_decode_pool_percentiles_are_ordered(case, share):
    lam = decode_rate(case.setup, case.workload).requests_per_s * share
    lat = decode_pool(case.setup, case.workload, lam)
    if lat is None:      # beyond what the pool's KV and sequence cap hold at this output length
        return
    assert lat.tpot_p50_s <= lat.tpot_p99_s
    lighter = decode_pool(case.setup, case.workload, lam / 2)
    assert lighter is not None and lighter.tpot_p99_s <= lat.tpot_p99_s * (1 + 1e-9)


# TTFT at load (issue 13 follow-up). Published points with their full setup (tests/reference/serving-runs.csv,
# rows S-NIM-* and S-DSTK-*); all held out. TTFT at load = the wait for the running step + the prefill-token
# queue + the steps that carry the prompt's own chunks. NIM concurrency 1 and 5 hold within 25 %; the others
# are recorded as expected failures with the reason (docs/estimator.md, Inference accuracy); strict, so a
# model change that fixes one shows up here.
TTFT_PINNED = ("S-NIM-H100-L70-TP2-5000-500-C1", "S-NIM-H100-L70-TP2-5000-500-C5")
TTFT_AT_LOAD = {
    "S-NIM-H100-L70-TP2-5000-500-C25": "closed loop of 25 fixed-length clients: prompts arrive in bursts, "
                                       "the Poisson queue is optimistic (-40 %)",
    "S-NIM-H100-L70-TP2-5000-500-C50": "as C25, 50 clients (-48 %)",
    "S-DSTK-H200-DSR1-VLLM-TP8-3200-800-C4": "closed loop of fixed-length requests arrives in waves; vLLM "
                                             "0.7.4 DeepSeek prefill much slower than the fit",
    "S-DSTK-H200-DSR1-VLLM-TP8-3200-800-C16": "as C4, and the waves queue 16 prompts",
}


@pytest.mark.parametrize("row_id", TTFT_PINNED)
def test_published_ttft_at_load_holds(row_id):
    # NIM Llama-3.3-70B FP8 TP2 on 2 H100, 5,000-token prompts, 500 outputs: TTFT 406.77 ms at 0.103 req/s
    # (concurrency 1) and 546.7 ms at 0.437 req/s (concurrency 5)
    case = CASES[row_id]
    assert case.kind == "ttft" and case.split == "held-out"
    assert abs(error(case)) <= 0.25, f"{row_id}: {error(case):+.3f}"


@pytest.mark.parametrize("row_id", [pytest.param(r, marks=pytest.mark.xfail(strict=True, reason=why))
                                    for r, why in sorted(TTFT_AT_LOAD.items())])
def test_published_ttft_at_load(row_id):
    case = CASES[row_id]
    assert case.kind == "ttft" and case.split == "held-out"
    err = error(case)
    assert abs(err) <= 0.25, f"{row_id}: {err:+.3f}"


def test_the_step_model_holds_the_same_prompt_at_concurrency_1():
    # NIM Llama-3.3-70B FP8 TP2 on 2 H100, 5000-token prompt, concurrency 1: TTFT 406.77 ms (row
    # S-NIM-H100-L70-TP2-5000-500-C1). One prefill step of the whole prompt is within 10 %: the misses above
    # are in the queueing formula, not in the step time.
    case = CASES["S-NIM-H100-L70-TP2-5000-500-C1"]
    single, _ = static_batch(case.setup, case.workload, 1)
    assert abs(single * 1e3 / 406.77 - 1) <= 0.10


@settings(max_examples=10, deadline=None, derandomize=True)
@given(case=st.sampled_from(AGG), share=st.floats(0.01, 0.9))
def test_ttft_at_load_is_at_least_the_prompts_own_prefill(case, share):
    lam = max_load(case.setup, case.workload).requests_per_s * share
    lat = aggregated(case.setup, case.workload, lam)
    single, _ = static_batch(case.setup, case.workload, 1)
    assert lat is None or lat.ttft_p50_s >= single * (1 - 1e-9)


DEEPSEEK = "designs/inference-deepseek-v3-pd-h100.yaml"


def test_deepseek_pd_design_validates_and_matches_the_published_per_node_throughput():
    from tests.helpers import ROOT
    from validator.pipeline import analyze

    analysis = analyze(ROOT / DEEPSEEK, DEEPSEEK)
    assert [f for f in analysis.findings if not f.waived] == []
    est = analysis.derived.estimate.inference
    # SGLang on 96 H100 (lmsys.org/blog/2025-05-05-large-scale-ep): 54,543 input tokens/s per node
    # for 2K prompts (prefill, EP32) and 22,282 output tokens/s per node (decode, EP72, 2K inputs)
    assert abs(est.prefill_tokens_per_s_per_gpu * 8 / 54_543 - 1) <= 0.25
    assert abs(est.decode_tokens_per_s_per_gpu * 8 / 22_282 - 1) <= 0.25
    assert est.kv_bytes_per_token == 70_272 and est.kv_transfer_ms is not None


def test_a_fleet_short_of_its_load_fails_the_capacity_rule_with_the_count_that_would(tmp_path):
    from tests.helpers import ROOT
    from validator.pipeline import analyze

    text = (ROOT / DEEPSEEK).read_text().replace("targets: {qps: 80,", "targets: {qps: 400,")
    path = tmp_path / "d.yaml"
    path.write_text(text)
    analysis = analyze(path, "d.yaml")
    est = analysis.derived.estimate.inference
    hits = [f for f in analysis.findings if f.rule == "INF008"]
    assert est.prefill_replicas_needed is not None and est.prefill_replicas_needed > 1
    assert any(f"needs {est.prefill_replicas_needed}" in f.message and "prefill" in f.message for f in hits)
    assert all(f.severity == "error" for f in hits)


def _deepseek_on(tmp_path, fabric_type: str, lossless: bool):
    from tests.helpers import ROOT
    from validator.pipeline import analyze

    text = (ROOT / DEEPSEEK).read_text().replace("    type: roce\n", f"    type: {fabric_type}\n", 1)
    if not lossless:
        start = text.index("    lossless:")
        text = text[:start] + text[text.index("  oob:"):]
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return {f.rule: f for f in analyze(path, "d.yaml").findings}


def test_wide_ep_on_infiniband_is_not_over_built_and_needs_no_warning(tmp_path):
    found = _deepseek_on(tmp_path, "infiniband", lossless=False)
    assert "INF005" not in found and "INF006" not in found


def test_wide_ep_without_rdma_is_flagged(tmp_path):
    found = _deepseek_on(tmp_path, "ethernet", lossless=False)
    assert found["INF006"].severity == "warning" and "EP 72" in found["INF006"].message


@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=st.floats(1e-6, 1.0), b=st.floats(0.0, 0.99), c=st.floats(0.0, 50.0), flat=st.booleans())
def test_fixed_point_is_the_least_root_of_the_step_equation(a, b, c, flat):
    """queueing._least_fixed_point (Illinois on a doubling bracket) against the closed form of
    t = a + b.t + c.t^2: the least root ((1-b) - sqrt((1-b)^2 - 4ac)) / 2c, a/(1-b) when c = 0, none
    when the discriminant is negative; and a step time that stops growing (max(a, b.t)) at a."""
    from validator.derive.estimate.queueing import _least_fixed_point

    if flat:
        assert _least_fixed_point(lambda t: max(a, b * t)) == pytest.approx(a, rel=1e-9)
        return
    disc = (1 - b) ** 2 - 4 * a * c
    got = _least_fixed_point(lambda t: a + b * t + c * t * t)
    if disc < 0:
        assert got is None
        return
    want = a / (1 - b) if c == 0 else 2 * a / ((1 - b) + math.sqrt(disc))   # the least root, stably
    if disc < 1e-9:     # a double root: g touches t there, and any t within the tolerance is a fixed point
        assert got is None or got == pytest.approx(want, rel=1e-3)
    else:
        assert got == pytest.approx(want, rel=1e-8)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(c=st.integers(1, 150), load=st.floats(0.0, 0.999))
def test_erlang_c_matches_its_closed_form(c, load):
    """The Erlang B recursion (with its early stop once it underflows) against
    C(c, a) = (a^c/c! . c/(c-a)) / (sum_{k<c} a^k/k! + a^c/c! . c/(c-a)), summed in logarithms."""
    from validator.derive.estimate.queueing import erlang_c

    a = load * c
    if a == 0:
        assert erlang_c(c, a) == 0.0
        return
    logs = [k * math.log(a) - math.lgamma(k + 1) for k in range(c)]
    top = c * math.log(a) - math.lgamma(c + 1) + math.log(c / (c - a))
    peak = max(*logs, top)
    want = math.exp(top - peak) / (math.fsum(math.exp(x - peak) for x in logs) + math.exp(top - peak))
    assert erlang_c(c, a) == pytest.approx(want, rel=1e-9, abs=1e-300)
