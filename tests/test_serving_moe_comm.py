"""Expert communication under attention DP by engine (issue 32, MoE attention DP over-estimated on Hopper):
TensorRT-LLM gathers every rank's tokens before the expert GEMMs and reduce-scatters the outputs after
them, NCCL collectives in the compute stream ("AllGather + ReduceScatter ... the default fallback strategy",
tensorrt_llm/_torch/modules/fused_moe/communication/allgather_reducescatter.py), so all of it is exposed;
SGLang and vLLM dispatch and combine with all-to-all kernels behind a second micro-batch, exposed at the
fitted `ep_exposed`. The arithmetic below is written out from those two patterns."""

from __future__ import annotations

import dataclasses

import pytest

from tests.serving_published import cases
from validator.derive.estimate.step import step_time

CASE = {c.id: c for c in cases()}["S-TRTNEW-H200-DSR1-DEP8-1000-1000"]     # DeepSeek-R1 FP8, DEP8, 8 H200


def _ep(engine: str, tokens: float) -> float:
    s = dataclasses.replace(CASE.setup, engine=dataclasses.replace(CASE.setup.engine, name=engine))
    return step_time(s, tokens, 1000.0, 0.0, 0.0).parts["ep"]


def _nvlink_seconds(nbytes: float) -> float:
    n = CASE.setup.network
    return nbytes / (n.nvlink_gbs * 1e9 * CASE.setup.constants.nvlink_efficiency)


@pytest.mark.parametrize("tokens", [64.0, 512.0])
def test_trtllm_gathers_every_ranks_tokens_unhidden(tokens):
    s, c = CASE.setup, CASE.setup.constants
    assert (s.shape.dp, s.shape.ep, s.model.hidden, s.model.moe.top_k) == (8, 8, 7168, 8)
    # 7 other ranks' tokens arrive in FP8 (1 byte) and 7 ranks' 16-bit partial outputs are reduce-scattered
    nbytes = 7 * tokens * 7168 * (1 + 2)
    per_layer = _nvlink_seconds(nbytes) + 2 * c.ep_latency_s
    assert _ep("trtllm", tokens) == pytest.approx(58 * per_layer, rel=1e-9)       # 58 MoE layers, all exposed


@pytest.mark.parametrize("tokens", [64.0, 512.0])
def test_all_to_all_engines_send_top_k_copies_behind_the_other_micro_batch(tokens):
    c = CASE.setup.constants
    nbytes = 8 * 7 / 8 * tokens * 7168 * (1 + 2)       # top-8 copies, 7 in 8 of them to other GPUs
    per_layer = _nvlink_seconds(nbytes) + 2 * c.ep_latency_s
    for engine in ("sglang", "vllm"):
        assert _ep(engine, tokens) == pytest.approx(58 * per_layer * c.ep_exposed, rel=1e-9)


def test_gather_costs_more_step_time_than_overlapped_all_to_all():
    assert _ep("trtllm", 256.0) > _ep("sglang", 256.0) > 0
