"""An offline burst of N requests drains (validator/derive/estimate/burst.py): expected makespan by
arithmetic written here, a seeded simulation of the same process, and the vLLM v0.6.0 ShareGPT rows
(500 requests at once) it was built for."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.serving_published import cases, error
from validator.derive.estimate.burst import expected_makespan, harmonic


def test_harmonic_numbers():
    assert harmonic(0) == 0.0
    assert harmonic(1) == 1.0
    assert harmonic(4) == pytest.approx(1 + 1 / 2 + 1 / 3 + 1 / 4)      # 25/12


def test_all_requests_at_once_take_the_expected_maximum_of_exponentials():
    # 3 requests on 3 slots, 6 rounds each on average, 1 s a round: E[max of 3 Exp(mean 6)] = 6 H_3
    # = 6 (1 + 1/2 + 1/3) = 11 s
    assert expected_makespan(3, 3, 6.0, lambda k: 1.0) == pytest.approx(11.0)


def test_a_queue_runs_full_then_drains():
    # 5 requests on 2 slots, 4 rounds on average, 1 s a round: 3 completions with both slots busy, one
    # every 4/2 = 2 rounds (6 s), then the last 2 drain: 4/2 + 4/1 = 6 s -> 12 s = 4 (3/2 + H_2)
    assert expected_makespan(5, 2, 4.0, lambda k: 1.0) == pytest.approx(12.0)
    assert expected_makespan(5, 2, 4.0, lambda k: 1.0) == pytest.approx(4 * (3 / 2 + harmonic(2)))


def test_round_time_by_running_sequences():
    # a round at k running takes 2 + k seconds; 4 requests, 2 slots, 3 rounds each on average:
    # queued: 2 completions x 3/2 rounds x (2 + 2) s = 12 s; drain: 3/2 x 4 + 3/1 x 3 = 6 + 9 = 15 s
    assert expected_makespan(4, 2, 3.0, lambda k: 2.0 + k) == pytest.approx(27.0)


def test_fixed_lengths_run_in_waves():
    # 5 requests of exactly 10 rounds on 2 slots: waves of 2, 2 and 1; a round at k running: 1 + k s
    # 10 x (3 + 3 + 2) = 80 s
    assert expected_makespan(5, 2, 10.0, lambda k: 1.0 + k, "fixed") == pytest.approx(80.0)
    with pytest.raises(ValueError):
        expected_makespan(5, 2, 10.0, lambda k: 1.0, "uniform")


def test_the_closed_form_matches_a_simulation():
    # 40 requests, 8 slots, exponential lengths of mean 20 rounds, a round at k running: 1 + 0.1 k s;
    # rounds are discrete in the simulation (geometric lengths), so the two agree to a few percent
    rng = random.Random(20261204)
    runs = []
    for _ in range(400):
        waiting = [max(1, round(rng.expovariate(1 / 20))) for _ in range(40)]
        running: list[int] = []
        t = 0.0
        while waiting or running:
            while waiting and len(running) < 8:
                running.append(waiting.pop())
            t += 1 + 0.1 * len(running)
            running = [r - 1 for r in running if r > 1]
        runs.append(t)
    simulated = sum(runs) / len(runs)
    assert expected_makespan(40, 8, 20.0, lambda k: 1 + 0.1 * k) == pytest.approx(simulated, rel=0.05)


@settings(max_examples=80, derandomize=True, deadline=None)
@given(n=st.integers(1, 600), c=st.integers(1, 300), m=st.floats(1, 2000), a=st.floats(1e-4, 0.05),
       b=st.floats(0, 1e-3))
def test_a_burst_is_never_faster_than_the_full_batch(n, c, m, a, b):
    # with a round time a + b k (a fixed cost per round, a cost per sequence) a full batch of c yields the
    # most tokens per second, c / (a + b c); a draining burst of n requests never beats it
    def t(k):
        return a + b * k
    full = min(n, c) / t(min(n, c))
    for dist in ("exponential", "fixed"):
        tokens_per_s = n * m / expected_makespan(n, c, m, t, dist)
        assert tokens_per_s <= full * (1 + 1e-9)


def test_vllm_v060_sharegpt_bursts():
    # vLLM v0.6.0 blog (tests/reference/serving-runs.csv S-V06-*-SGPT-THR): 500 ShareGPT requests at once,
    # 36.5 req/s (8B, 1 H100) and 17.4 req/s (70B, 4 H100). The steady state of a full batch gave +76 % and
    # +51 %; the burst drains (exponential output lengths, mean 179 tokens)
    rows = {c.id: c for c in cases()}
    eight, seventy = rows["S-V06-H100-L8-SGPT-THR"], rows["S-V06-H100-L70-SGPT-THR"]
    assert eight.kind == seventy.kind == "burst" and eight.requests == 500 and eight.lengths == "exponential"
    assert abs(error(eight)) <= 0.15
    assert abs(error(seventy)) <= 0.30
    # the fixed-length sonnet rows of the same post drain in waves, close to the steady state
    assert rows["S-V06-H100-L70-DEC-THR"].lengths == "fixed"
    assert abs(error(rows["S-V06-H100-L70-DEC-THR"])) <= 0.10


def test_a_burst_counts_the_requests_sent_not_the_slowest_ranks_share_times_the_ranks():
    # 5 requests over 2 attention ranks: the ranks take 3 and 2, the one with 3 sets the makespan, and 5
    # requests (not 2 x 3 = 6) are served in it
    import dataclasses

    from validator.derive.estimate.burst import burst

    case = {c.id: c for c in cases()}["S-V06-H100-L8-SGPT-THR"]
    s = case.setup
    two = dataclasses.replace(s, shape=dataclasses.replace(s.shape, gpus=2 * s.shape.gpus, dp=2))
    five, six = burst(two, case.workload, 5), burst(two, case.workload, 6)
    assert five.makespan_s == pytest.approx(six.makespan_s)      # the slowest rank runs 3 in both
    assert five.requests_per_s * five.makespan_s == pytest.approx(5)
    assert six.requests_per_s * six.makespan_s == pytest.approx(6)
