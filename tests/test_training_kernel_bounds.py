"""The two kernel floors of the training estimator (docs/estimator.md, The step), checked against arithmetic
written here:

- a fused attention kernel's softmax exponentials run on the SFUs, `tensor_flops_per_exp` below the 16-bit
  tensor peak (efficiency.yaml training.softmax_exp: H100 989 TFLOPS / 3.9 Texp/s = 254, FlashAttention-3;
  B200 2.25x the tensor rate on the same SFUs = 484, FlashAttention-4; Blackwell Ultra doubles the SFUs);
  forward computes 4 x head_dim FLOPs per score and one exp, so head_dim 64 on B200 (256 FLOPs per exp) is
  exp-bound whatever the tensor cores' efficiency;
- a grouped expert GEMM cannot run faster than streaming the GPU's expert weights from HBM once per pass.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import builtin_catalog, training_setup
from validator.derive.estimate.compute import attention_times, expert_weight_floor, layer_compute
from validator.derive.estimate.constants import training_constants, training_table


def _constants(gpu: str, precision: str = "bf16", **kw: float):  # type: ignore[no-untyped-def]
    return dataclasses.replace(training_constants(gpu, precision), **kw)


def test_the_exp_ratios_are_the_published_rates() -> None:
    ratio = training_table().tensor_flops_per_exp
    assert ratio["h100-sxm"] == pytest.approx(989 / 3.9, rel=0.01)          # FlashAttention-3, section 3
    assert ratio["b200"] == pytest.approx(2250 / (148 * 16 * 1.965e9 / 1e12), rel=0.01)
    assert ratio["b300"] == pytest.approx(ratio["b200"] / 2, rel=0.01)      # Blackwell Ultra: 2x SFU


def test_head_dim_64_on_b200_is_bound_by_its_exponentials() -> None:
    gpu = builtin_catalog().gpu("b200")
    model = builtin_catalog().model("llama3-8b").model_copy(update={"head_dim": 64, "heads": 64})
    s = training_setup(model=model, gpu=gpu, seq=4096)
    c = _constants("b200", attention_efficiency=0.85)
    forward, backward = attention_times(s, c)
    tokens = 4096                                      # micro-batch 1 x 4,096
    exps = 64 * 4096 / 2 * tokens                      # heads x causal half of the scores, per token
    flops = 4 * 4096 * 64 * 64 / 2 * tokens            # 4 x head_dim per score: 256 FLOPs per exp
    assert flops / exps == 256
    assert forward == pytest.approx(exps * 484 / 2250e12)            # 484 > 256 / 0.85 = 301
    assert backward == pytest.approx(2.5 * flops / (2250e12 * 0.85))  # 2.5 x 301 = 753 > 484: matmul-bound


def test_head_dim_128_on_h100_is_bound_by_its_matmuls() -> None:
    s = training_setup()
    c = _constants("h100-sxm", attention_efficiency=0.85)
    forward, backward = attention_times(s, c)
    flops = 4 * 8192 * 32 * 128 / 2 * 8192             # 512 FLOPs per exp > 254 / 0.85
    assert forward == pytest.approx(flops / (989e12 * 0.85))
    assert backward == pytest.approx(2.5 * forward)


def test_no_exp_bound_without_a_fused_kernel() -> None:
    gpu = builtin_catalog().gpu("b200")
    model = builtin_catalog().model("llama3-8b").model_copy(update={"head_dim": 64, "heads": 64})
    s = training_setup(model=model, gpu=gpu, seq=4096, flash_attention=False)
    c = _constants("b200", attention_efficiency=0.85)
    forward, _ = attention_times(s, c)
    assert forward == pytest.approx(4 * 4096 * 64 * 64 * 4096 / (2250e12 * 0.85))    # full s^2, matmuls only


def test_expert_weight_floor_is_the_local_weights_over_hbm() -> None:
    gpu = builtin_catalog().gpu("b200")
    model = builtin_catalog().model("deepseek-v3")
    s = training_setup(model=model, gpu=gpu, ep=8, dp=8, seq=128, global_batch=8, precision="fp8")
    # 256 / 8 = 32 local experts of 3 x 7168 x 2048 weights, 1 byte each in FP8, at 7.7 TB/s, in 58 of 61 layers
    stream = 32 * 3 * 7168 * 2048 * 1 / 7.7e12
    assert expert_weight_floor(s) == pytest.approx(stream * 58 / 61)
    # 128 tokens per micro-batch, 8 experts each: 4 tokens per local expert, far below the GEMM's balance point
    assert layer_compute(s, training_constants("b200", "fp8")).matmul >= stream * 58 / 61


def test_a_dense_model_has_no_expert_floor() -> None:
    assert expert_weight_floor(training_setup()) == 0.0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seq=st.sampled_from([1024, 4096, 16384]), heads=st.sampled_from([16, 32, 64]),
       gpu=st.sampled_from(["a100-80gb-sxm", "h100-sxm", "b200", "b300"]),
       eff=st.floats(min_value=0.25, max_value=0.85))
def test_the_bounds_never_speed_attention_up(seq: int, heads: int, gpu: str, eff: float) -> None:
    """The exp floor only ever adds time: each pass is at least its matmuls at the fitted efficiency, and
    the backward never takes less than the forward."""
    g = builtin_catalog().gpu(gpu)
    model = builtin_catalog().model("llama3-8b").model_copy(update={"head_dim": 4096 // heads, "heads": heads})
    s = training_setup(model=model, gpu=g, seq=seq)
    c = _constants(gpu, attention_efficiency=eff)
    forward, backward = attention_times(s, c)
    matmul = 4 * seq * 4096 / 2 * seq / (g.tflops["bf16"] * 1e12 * eff)
    assert forward >= matmul * (1 - 1e-9)
    assert backward >= 2.5 * matmul * (1 - 1e-9)
    assert backward >= forward
