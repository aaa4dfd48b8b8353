"""An offline burst: N requests sent at once to one replica, served until the last one finishes
(benchmark_serving at `--request-rate inf`, trtllm-bench, vLLM's offline `LLM.generate`). Its
throughput is the total over the makespan, not the steady state of a saturated replica: once the queue
is empty the batch drains as requests finish, and the last steps run a batch of a few long requests.

Decode rounds (one output token of every running sequence; `pp` pipeline steps with speculation's
`E` tokens per round counted in the round count) on `c` sequence slots per attention rank, each
request needing `m` rounds on average:

- **exponential** output lengths (a chat dataset such as ShareGPT whose lengths are not fixed; the
  distribution of largest entropy for a given mean): while requests wait, all `c` slots run and one
  finishes every `m / c` rounds (memorylessness: each running request ends in a round with probability
  `1 / m`), `N - c` such completions; then the drain, `k = c, c-1, ..., 1` running, each phase `m / k`
  rounds. Expected makespan `sum_k m/k t(k) + (N - c) m/c t(c)`, with `t(k)` the round time at k
  running; at a constant round time `m t ((N - c)/c + H_c)`, H_c the c-th harmonic number (the expected
  maximum of c exponentials of mean m is `m H_c`).
- **fixed** lengths (sonnet, random datasets with a set output length): waves of `c` requests that start
  and finish together: `floor(N / c)` waves of `m t(c)` and one of the remainder.

Every request's prefill is added as in the steady state (`operating.max_load`): prompts of `I'`
uncached tokens, `floor(budget / I')` to a prefill step.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from validator.base.facts import fact
from validator.derive.estimate.operating import Workload, contexts, fresh_prompt, seq_cap
from validator.derive.estimate.step import ServingSetup, step_time

DISTRIBUTIONS = ("exponential", "fixed")


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n (H_0 = 0)."""
    return math.fsum(1.0 / k for k in range(1, n + 1))


def expected_makespan(requests: int, slots: int, mean_rounds: float, round_time: Callable[[int], float],
                      distribution: str = "exponential") -> float:
    """Expected time until the last of `requests` requests finishes on `slots` slots, each request
    `mean_rounds` decode rounds on average, a round at k running taking `round_time(k)` seconds."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"unknown output-length distribution {distribution!r}")
    if requests <= 0 or mean_rounds <= 0:
        return 0.0
    c = max(1, min(requests, slots))
    if distribution == "fixed":
        waves, rest = divmod(requests, c)
        return mean_rounds * (waves * round_time(c) + (round_time(rest) if rest else 0.0))
    queued = (requests - c) * mean_rounds / c * round_time(c)
    drain = math.fsum(mean_rounds / k * round_time(k) for k in range(1, c + 1))
    return queued + drain


@fact
class Burst:
    """One replica serving a burst of requests to the end."""

    requests_per_s: float          # whole replica: requests / makespan
    output_tokens_per_s: float     # whole replica
    makespan_s: float
    prefill_s: float               # of the makespan, prefill steps
    mean_batch: float              # running sequences per attention rank, averaged over the decode time


def burst(s: ServingSetup, w: Workload, requests: int, distribution: str = "exponential") -> Burst:
    """Throughput of `requests` requests sent at once, split evenly over the replica's attention ranks."""
    e, pp, dp = s.engine, s.shape.pp, s.shape.dp
    per_rank = max(1, math.ceil(requests / dp))
    cap, _ = seq_cap(s, w)
    slots = max(1, int(cap // pp)) * pp if cap >= pp else max(1, int(cap))
    dec_ctx, pf_ctx = contexts(s, w)
    fresh = fresh_prompt(s, w)
    rounds = w.decode_steps(e.tokens_per_step)

    def round_time(k: int) -> float:     # k running on the rank: pp micro-batches of k / pp
        return pp * step_time(s, k / pp, dec_ctx, 0, 0).seconds

    decode = expected_makespan(per_rank, slots, rounds, round_time, distribution)
    prefill = 0.0
    if fresh > 0:
        k = max(1.0, math.floor(e.max_batched_tokens / fresh))
        prefill = per_rank * step_time(s, 0, dec_ctx, k * fresh, pf_ctx).seconds / k
    makespan = decode + prefill
    if makespan <= 0:
        return Burst(math.inf, math.inf, 0.0, 0.0, 0.0)
    rate = requests / makespan     # the slowest rank (per_rank requests) sets the makespan
    all_rounds = expected_makespan(per_rank, slots, rounds, lambda _: 1.0, distribution)
    mean_batch = per_rank * rounds / all_rounds if all_rounds else 0.0
    return Burst(rate, rate * w.output, makespan, prefill, mean_batch)
