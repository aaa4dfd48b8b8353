"""DeepSeek's own inference engine (`engine: {name: deepseek}`, validator/data/serving.yaml), the two ways
its decode differs from the public engines' fitted constants, each from DeepSeek's publications:
- absorbed-MLA decode attention runs FlashMLA (DeepSeek's kernel, "now in production") at its published
  rates on Hopper: 660 TFLOP/s compute-bound, 3,000 GB/s memory-bound on H800 (FlashMLA README);
- the decode all-to-all frees the SMs and runs beside the other micro-batch's attention (deepseek-ai/
  profile-data README; DeepSeek-V3 report 3.4.2): a MoE layer takes max(attention, experts + all-to-all).
Checked against SGLang's reading of DeepSeek's decode profile (tests/reference/serving-runs.csv
S-SGL-H800-DSV3-DECODE-DSPROFILE: 18,598 output tokens/s per node at 128 requests per GPU, 4,096-token KV,
EP128; derived from profiler traces with perfectly balanced routing, so a check, not a fitted row)."""

from __future__ import annotations

import csv
import dataclasses

import pytest

from tests.serving_published import CSV, kv_tokens_rank, setup_of
from validator.derive.estimate.operating import Workload, decode_rate
from validator.derive.estimate.step import ServingSetup, step_time

with open(CSV, newline="", encoding="utf-8") as fh:
    PROFILE = next(r for r in csv.DictReader(fh) if r["id"] == "S-SGL-H800-DSV3-DECODE-DSPROFILE")


def _setup(engine: str) -> ServingSetup:
    s = setup_of(PROFILE)
    return dataclasses.replace(s, engine=dataclasses.replace(s.engine, name=engine))


def test_flashmla_rates_for_decode_attention():
    s = _setup("deepseek")
    assert s.gpu.id == "h800-sxm" and s.shape.dp == 128 and s.kv_precision == "bf16"
    parts = step_time(s, 128, 4096, 0, 0).parts
    flops = 128 * 4096 * 61 * 2 * 128 * (2 * 512 + 64)     # absorbed MLA: 128 heads over the 576-wide latent
    nbytes = 128 * 4096 * 70_272                             # each sequence reads its 70,272-byte KV per token
    attention = max(flops / 660e12, nbytes / 3000e9)         # FlashMLA's published rates on H800
    assert parts["attention"] == pytest.approx(attention, rel=2e-3)
    public = step_time(_setup("sglang"), 128, 4096, 0, 0).parts["attention"]
    assert public > 3 * parts["attention"]                   # the fitted share: 18 % of the 16-bit peak


def test_decode_moe_runs_beside_attention():
    ds, sg = _setup("deepseek"), _setup("sglang")
    for batch in (16.0, 128.0):
        d = step_time(ds, batch, 4096, 0, 0).parts
        whole_comm = step_time(sg, batch, 4096, 0, 0).parts["ep"] / sg.constants.ep_exposed
        experts = step_time(sg, batch, 4096, 0, 0).parts["experts"]
        assert d["attention"] + d["experts"] + d["ep"] == pytest.approx(max(d["attention"], experts + whole_comm))


def test_prefill_steps_keep_the_fitted_overlap():
    ds, sg = _setup("deepseek"), _setup("sglang")
    assert step_time(ds, 0, 0, 8192, 2048).parts == step_time(sg, 0, 0, 8192, 2048).parts


def test_deepseek_decode_profile_within_15_percent():
    s = _setup("deepseek")
    w = Workload(4096.0, 0.0, kv_tokens_rank(s))
    per_gpu = decode_rate(s, w, 128.0).output_tokens_per_s / s.shape.gpus
    assert per_gpu == pytest.approx(18_598 / 8, rel=0.15)      # 2,540 against 2,325: +9 %
