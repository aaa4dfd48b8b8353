"""A ZeRO-3 (FSDP) scaling series, held out (issue 32): a fixed model on a growing number of GPUs, its
published TFLOP/s per GPU against the estimate's, as a fall relative to the series' first point.

Source: KempnerForge's weak-scaling benchmark (KempnerInstitute/KempnerForge,
benchmarks/weak_scaling_160gpu/README.md, 2026-06-30), H200 BF16, TP=4 inside each 4-GPU node and FSDP2
across nodes, the per-GPU batch fixed (13B: 4 sequences x 4 accumulation steps, 70B: 2 x 4, 4,096 tokens),
full activation checkpointing. Rows T-KFORGE-* of tests/reference/training-runs.csv; the source family
is held out (never in a fit, `HELD_OUT_ONLY`). With the per-GPU batch fixed, TFLOP/s per GPU is
proportional to 1 / step time, so the published fall is the ratio of the published step times.
"""

from __future__ import annotations

import pytest

from tests.training_runs import HELD_OUT_ONLY, fit_runs, runs
from validator.derive.estimate.training import estimate_training

RUNS = {r.id: r for r in runs()}
# published step times (README Results table, "Step s"), by GPU count
PUBLISHED = {
    "13B": {8: 4.39, 32: 4.75, 64: 4.84, 128: 4.95, 160: 4.91},
    "70B": {32: 14.03, 64: 14.63, 96: 15.07, 128: 14.98, 160: 15.32},
}
GOAL = 0.25          # issue 32: the published fall of TFLOP/s per GPU reproduced within 25 %


def _estimated(model: str, gpus: int) -> float:
    return estimate_training(RUNS[f"T-KFORGE-H200BF16-{model}-{gpus}"].setup).step_time_s


def test_the_series_is_held_out_and_read_as_published():
    assert "kempnerforge" in HELD_OUT_ONLY
    assert not any(r.family == "kempnerforge" for r in fit_runs())
    for model, series in PUBLISHED.items():
        for gpus, step in series.items():
            run = RUNS[f"T-KFORGE-H200BF16-{model}-{gpus}"]
            s = run.setup
            assert run.step_time_s == step
            assert (s.tp, s.dp, s.sharding.stage, s.gpus) == (4, gpus // 4, 3, gpus)
            # tokens per step / published tokens/s = the published step time (README's own check)
            assert s.global_batch * s.seq / float(run.data["tokens_per_s"]) == pytest.approx(step, rel=0.01)


@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_the_fall_of_tflops_per_gpu_is_reproduced(model):
    series = PUBLISHED[model]
    first = min(series)
    for gpus, step in series.items():
        published_ratio = series[first] / step          # TFLOP/s per GPU at `gpus` over that at `first`
        estimated_ratio = _estimated(model, first) / _estimated(model, gpus)
        assert estimated_ratio / published_ratio == pytest.approx(1.0, abs=GOAL), (model, gpus)


def test_the_70b_series_falls_as_published():
    """From 32 to 160 GPUs the published TFLOP/s per GPU falls by 8.4 % (14.03 -> 15.32 s): the estimate
    falls too (each FSDP all-gather and reduce-scatter crosses a ring of 8 -> 40 nodes), by less than
    twice the published fall."""
    published_fall = 1 - 14.03 / 15.32
    estimated_fall = 1 - _estimated("70B", 32) / _estimated("70B", 160)
    assert 0 < estimated_fall < 2 * published_fall


@pytest.mark.parametrize("run_id", sorted(i for i in RUNS if i.startswith("T-KFORGE-") and not i.endswith("-B1")))
def test_each_point_is_within_the_held_out_goal(run_id):
    run = RUNS[run_id]
    assert estimate_training(run.setup).step_time_s / run.step_time_s == pytest.approx(1.0, abs=GOAL)


# The same source's 175B model on 360 H200 (benchmarks/175b_360gpu/README.md): TP 4 x FSDP2 over 90 nodes,
# one micro-batch per step. 8 sequences per GPU: 19.09 s, 47.7 % MFU; 1 sequence per GPU: 8.1 % MFU ("one
# microbatch cannot amortize the per-step FSDP all-gather and reduce-scatter of 175B parameters"): 14.05 s
# in the source's FLOP convention (tests/training_runs.py CONVENTION).
def test_zero3_at_one_micro_batch_loses_most_of_its_mfu():
    """Published MFU falls to 8.1 / 47.7 = 17 % of the large-batch run's; the estimate's falls too (each
    layer's gathers and reduce-scatters, 346 GB per GPU per step, no longer hide behind the compute), to
    less than half."""
    big = estimate_training(RUNS["T-KFORGE-H200BF16-175B-360-B8"].setup)
    small = estimate_training(RUNS["T-KFORGE-H200BF16-175B-360-B1"].setup)
    assert small.dp_traffic.gather + small.dp_traffic.reduce == pytest.approx(
        (89 / 90) * (2 * 2 + 4) * 175.0e9 / 4, rel=0.01)          # (n-1)/n (2 P + G) Psi, Psi = N / TP
    assert small.mfu / big.mfu < 0.5


@pytest.mark.xfail(strict=True, reason="ZeRO-3 at one 4K-token micro-batch per GPU on 360 GPUs comes out 34 % "
                   "fast (9.2 s against 14.05 s): the exposed gathers at the assumed 400 Gb/s per GPU are not enough "
                   "(the source does not state its NIC count); issue 32's small-batch fixed cost is not modelled")
def test_zero3_at_one_micro_batch_within_the_goal():
    run = RUNS["T-KFORGE-H200BF16-175B-360-B1"]
    assert estimate_training(run.setup).step_time_s / run.step_time_s == pytest.approx(1.0, abs=GOAL)
