"""DeepSeek-V3's multi-token prediction (MTP) module in training (issue 32): one more transformer layer, a
2h x h projection and one more pass through the shared LM head and the loss, per module, on the last
pipeline stage (DeepSeek-V3 technical report, section 2.2)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.builders import training_setup
from tests.training_runs import runs
from validator.derive.estimate.compute import head_compute, layer_compute
from validator.derive.estimate.constants import training_constants
from validator.derive.estimate.flops import forward_flops_per_token, mtp_flops_per_token
from validator.derive.estimate.setup import TrainingSetup
from validator.derive.estimate.training import estimate_training
from validator.resolve.catalog import builtin_catalog

CAT = builtin_catalog()
RUNS = {r.id: r for r in runs()}


def test_flops_per_token_match_megatron_bridge_with_and_without_mtp():
    """Published TFLOP/s over tokens/s of the Megatron-Bridge DeepSeek-V3 rows at 4,096 tokens
    (tests/reference/training-runs.csv, `derived` model_gflop_per_token): 260.0 with MTP
    (T-MB2608-GB300MXFP8-DSV3-256), 249.7 on the rows labelled '[w/o MTP]' (T-MB2511-GB300BF16-DSV3-256)."""
    m = RUNS["T-MB2608-GB300MXFP8-DSV3-256"].setup.model
    base = 3 * forward_flops_per_token(m, 4096) / 1e9
    assert base == pytest.approx(249.7, rel=0.005)
    assert base + 3 * mtp_flops_per_token(m, 4096, 1) / 1e9 == pytest.approx(260.0, rel=0.005)


def test_the_rows_that_train_mtp_say_so():
    assert RUNS["T-MB2608-GB300MXFP8-DSV3-256"].setup.mtp_layers == 1
    assert RUNS["T-MB2511-GB300BF16-DSV3-256"].setup.mtp_layers == 0          # '[w/o MTP]'
    assert RUNS["T-AUTOMODEL-H100BF16-DSV3-256"].setup.mtp_layers == 0        # 249.5 GFLOP per token


def _setup(**kw: object) -> TrainingSetup:
    return training_setup(**{"dp": 1, "seq": 4096, "global_batch": 4, **kw})


def test_one_module_costs_one_layer_and_one_head_per_micro_batch():
    s0 = _setup()
    s1 = dataclasses.replace(s0, mtp_layers=1)
    c = training_constants("h100-sxm", "bf16")
    e0, e1 = estimate_training(s0, c), estimate_training(s1, c)
    extra = s0.microbatches * (layer_compute(s0, c).train + head_compute(s0, c))
    assert e1.breakdown["compute"] - e0.breakdown["compute"] == pytest.approx(extra, rel=1e-9)
    # MFU counts the module's FLOPs (Megatron-Bridge does), so it is not lower for the extra work alone
    tokens = s0.global_batch * s0.seq
    assert e1.model_tflops_per_gpu * e1.step_time_s * 1e12 == pytest.approx(
        3 * (forward_flops_per_token(s0.model, 4096) + mtp_flops_per_token(s0.model, 4096, 1)) * tokens)
    assert e1.mfu <= e1.hfu <= 1


@pytest.mark.parametrize("pp", [2, 4, 8, 16])
def test_the_pipeline_is_balanced_around_the_module(pp):
    """Without a declared layout, the last stage takes the decoder layers that balance the pipeline around
    the module: never slower than the module put on top of the default split."""
    s = _setup(model=CAT.model("llama3-70b"), pp=pp, global_batch=64, mtp_layers=1)
    # the same split declared: a declared layout counts decoder layers, and the module comes on top
    declared = dataclasses.replace(s, pipeline_layers=s.stage_layers)
    balanced, naive = estimate_training(s), estimate_training(declared)
    assert balanced.step_time_s <= naive.step_time_s * (1 + 1e-12)
