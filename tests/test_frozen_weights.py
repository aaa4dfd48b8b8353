"""Fine-tuning with frozen weights (LoRA, partial unfreezing; `training.trainable_params_b`): frozen
weights keep no gradients or optimizer state, compute no weight-gradient matmuls and are never reduced
over data parallel (ZeRO-3 still gathers them). Arithmetic from the model's own parameter counts."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import ROOT
from validator.derive.estimate.compute import layer_compute
from validator.derive.estimate.constants import training_constants
from validator.derive.estimate.data_parallel import dp_traffic
from validator.derive.estimate.flops import forward_flops_per_token, weight_flops_per_token
from validator.derive.estimate.training import estimate_training
from validator.derive.estimate.training_memory import training_memory
from validator.derive.estimate.training_report import training_setup
from validator.read.model import Training
from validator.resolve.catalog import builtin_catalog

DESIGN = ROOT / "designs" / "superpod-h100-4su.yaml"      # Llama 3 70B, TP 8, PP 4, DP 31, ZeRO-1


def _design(**training: object) -> dict:
    d = yaml.safe_load(DESIGN.read_text())
    d["training"].update(training)
    return d


def _setups(trainable_b: float, **training: object):
    full = training_setup(topology_of(_design(**training)))
    lora = training_setup(topology_of(_design(trainable_params_b=trainable_b, **training)))
    return full, lora


def test_frozen_weights_keep_no_gradients_or_optimizer_state():
    d = _design(trainable_params_b=0.7)
    model = builtin_catalog().entries["model"]["llama3-70b"]
    t = 0.7 / model.params_b          # 0.7B adapter parameters over the 70.6B of Llama 3 70B
    full = training_memory(model, Training.model_validate(_design()["training"]), 4.0)
    lora = training_memory(model, Training.model_validate(d["training"]), 4.0)
    assert lora.weights_gb == pytest.approx(full.weights_gb)              # frozen weights still held
    assert lora.gradients_gb == pytest.approx(full.gradients_gb * t)
    assert lora.optimizer_gb == pytest.approx(full.optimizer_gb * t)
    assert lora.activations_gb == pytest.approx(full.activations_gb)


def test_only_trained_weights_are_reduced_over_data_parallel():
    full, lora = _setups(0.7)
    t = lora.trainable_share
    assert t == pytest.approx(0.7 / full.model.params_b)
    a, b = dp_traffic(full), dp_traffic(lora)
    assert b.reduce == pytest.approx(a.reduce * t) and b.gather == pytest.approx(a.gather * t)
    # ZeRO-3 gathers every weight, frozen or not, for forward and backward
    z_full, z_lora = _setups(0.7, zero_stage=3)
    assert dp_traffic(z_lora).gather == pytest.approx(dp_traffic(z_full).gather)
    assert dp_traffic(z_lora).reduce == pytest.approx(dp_traffic(z_full).reduce * t)


def test_backward_skips_the_frozen_weight_gradients():
    full, lora = _setups(0.7)
    c = training_constants(full.gpu.id, full.precision)
    lf, ll = layer_compute(full, c), layer_compute(lora, c)
    assert ll.matmul == pytest.approx(lf.matmul) and ll.forward == pytest.approx(lf.forward)
    assert lf.train - ll.train == pytest.approx((1 - lora.trainable_share) * lf.matmul)
    ef, el = estimate_training(full, c), estimate_training(lora, c)
    assert el.step_time_s < ef.step_time_s
    # model FLOPs: 3 x forward less the weight-gradient matmuls of the frozen share
    tokens = full.global_batch * full.seq
    f, w = forward_flops_per_token(full.model, full.seq), weight_flops_per_token(full.model)
    expected = (3 * f - (1 - lora.trainable_share) * w) * tokens / el.step_time_s / lora.gpus / 1e12
    assert el.model_tflops_per_gpu == pytest.approx(expected)
    assert el.mfu <= el.hfu <= 1.0


def test_all_trainable_is_the_default():
    full, _ = _setups(0.7)
    same = dataclasses.replace(full, trainable_share=1.0)
    c = training_constants(full.gpu.id, full.precision)
    assert estimate_training(same, c).step_time_s == estimate_training(full, c).step_time_s
