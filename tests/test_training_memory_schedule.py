"""Activation memory by the schedule actually run (issue 32): Megatron's interleaved 1F1B warm-up on the
first stage runs 2(p-1) + (v-1)p chunks of l/(pv) layers ahead of its first backward, p (1 + (p-1)/(pv))
micro-batches' worth of the stage's layers, but a step of m micro-batches has only m v chunks: with
m <= p every forward runs first and m micro-batches of the stage's layers are held (Megatron-LM
schedules.py, forward_backward_pipelining_with_interleaving: num_warmup_microbatches capped at the total,
all_warmup_microbatches when m == p)."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers import ROOT
from validator.derive.estimate.training_memory import training_memory
from validator.read.model import Training


def _training(pp: int, vpp: int, m: int) -> Training:
    # superpod-h100-4su: Llama 3 70B (80 layers), TP 8, DP 31, micro-batch 1, selective recomputation
    t = yaml.safe_load((ROOT / "designs" / "superpod-h100-4su.yaml").read_text())["training"]
    t["parallelism"].update(pp=pp, vpp=vpp)
    t["global_batch"] = 31 * m
    return Training.model_validate(t)


def _activations(pp: int, vpp: int, m: int) -> float:
    from validator.resolve.catalog import builtin_catalog

    model = builtin_catalog().entries["model"]["llama3-70b"]
    return training_memory(model, _training(pp, vpp, m), reserve_gb=4.0).activations_gb


def test_interleaving_with_as_many_micro_batches_as_stages_holds_no_more_than_1f1b():
    # m = p = 8: every forward of the step runs first; 8 micro-batches of 10 layers either way
    assert _activations(8, 2, 8) == pytest.approx(_activations(8, 1, 8))


def test_interleaving_with_more_micro_batches_holds_the_warm_up_depth():
    # m = 32 > p = 8, v = 2: 2 x 7 + 1 x 8 + 1 = 23 chunks of 5 layers = 115 layers = 8 x 10 x (1 + 7/16).
    # Beside the layers, the last micro-batch's embedding output and fp32 logits and their gradient:
    # 4 s b h / t (1 + vocab / h) = 4 x 8192 x 8192 / 8 x (1 + 128256 / 8192) bytes, independent of the schedule
    fixed = 4 * 8192 * 8192 / 8 * (1 + 128256 / 8192) / 1e9
    layers = _activations(8, 1, 32) - fixed
    assert _activations(8, 2, 32) - fixed == pytest.approx(layers * (1 + 7 / 16))
    assert _activations(8, 2, 8) - fixed == pytest.approx(layers)
