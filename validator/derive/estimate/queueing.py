"""Latency at load: a closed-form queueing model of continuously batching replicas
(docs/estimator.md, Inference), deterministic and monotone in the load by construction.

- Operating point: at `lam` requests/s per attention rank, a step of time t carries lam.t.(O-1)/E
  decoding sequences and lam.t.I' prefill tokens; t is the least fixed point of t = step(t), found by
  bisection (the step grows with its tokens, so the point grows with the load). No fixed point inside
  the engine's limits (sequence cap, KV pool, token budget) means the replica is overloaded.
- TPOT: the step time at the mean occupancy (p50) and at its p99 (the number of running sequences of
  an M/G/inf system is Poisson: mean + z.sqrt(mean)); prefill bursts averaged over a request's steps.
- TTFT: the wait for the running step, the prefill-token queue (M/D/1 on the budget the decodes leave,
  exponential tail: w_p = (Wq/rho).ln(rho/(1-p))), the steps that carry the prompt's own chunks (each
  with the running decodes and the chunk's own prefill tokens, never shorter than the mean step), and
  the wait for a free sequence slot when the cap binds (Erlang C over the slots).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from validator.base.estimate_tables import serving
from validator.base.facts import fact
from validator.derive.estimate.operating import Workload, contexts, fresh_prompt, prefill_rate, seq_cap
from validator.derive.estimate.step import ServingSetup, step_time

Z50 = 0.0


def z99() -> float:
    return serving().slo_percentile_z


@fact
class Latency:
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    batch: float          # running sequences per attention rank


def _tail(mean_wait: float, rho: float, p: float) -> float:
    """p-quantile of a wait that is 0 with probability 1 - rho, else exponential with mean Wq / rho."""
    if rho <= 1 - p or mean_wait <= 0:
        return 0.0
    return mean_wait / rho * math.log(rho / (1 - p))


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in an M/M/c queue with offered load a (Erlang B recursion)."""
    if a >= c:
        return 1.0
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
        if b == 0.0:        # underflowed: it stays 0 to k = c, and so does the answer
            return 0.0
    return c * b / (c - a * (1 - b))


def _least_fixed_point(g: Callable[[float], float | None]) -> float | None:
    """Least t with g(t) <= t, for g increasing; None when g leaves its domain first (overload).

    Doubling finds a bracket [lo, hi] with g(lo) > lo and g(hi) <= hi; the Illinois method (regula
    falsi that halves the weight of an end kept twice) then narrows it to nine significant digits in a
    handful of steps where bisection needs thirty. A step that lands on a fixed point (a step time that
    no longer grows: the floor of a memory-bound step) checks the point just below it and stops; a step
    that does not halve the bracket is followed by a bisection, so it always ends. Estimates are printed
    with four digits."""
    lo, f_lo = 0.0, g(0.0)
    if f_lo is None:
        return None
    hi = f_lo
    for _ in range(60):
        v = g(hi)
        if v is None:
            return None
        if v <= hi:
            break
        lo, f_lo, hi = hi, v - hi, hi * 2
    else:
        return None
    f_hi, kept, bisect = v - hi, 0, False
    while hi - lo > 1e-9 * hi:
        width = hi - lo
        mid = (lo + hi) / 2 if bisect else hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        v = g(mid)
        if v is not None and v <= mid:
            hi, f_hi = mid, v - mid
            f_lo, kept = (f_lo / 2 if kept < 0 else f_lo), -1
            below = hi * (1 - 5e-10)
            if -f_hi <= 1e-9 * hi and lo < below:   # on a fixed point to nine digits: the least one?
                v = g(below)
                if v is None or v > below:
                    lo, f_lo = below, (math.inf if v is None else v - below)
                else:
                    hi, f_hi = below, v - below
        else:                       # past the domain inside the bracket cannot happen for an increasing g
            lo, f_lo = mid, (math.inf if v is None else v - mid)
            f_hi, kept = (f_hi / 2 if kept > 0 else f_hi), 1
        bisect = hi - lo > width / 2
    return hi


def aggregated(s: ServingSetup, w: Workload, lam: float) -> Latency | None:
    """Latency of one aggregated replica at `lam` requests/s (None: overloaded)."""
    e, sh = s.engine, s.shape
    lam_r = lam / sh.dp
    fresh = fresh_prompt(s, w)
    dec_ctx, pf_ctx = contexts(s, w)
    per_step = e.tokens_per_step
    steps = w.decode_steps(per_step)
    q = 1 + e.spec_tokens
    cap, _ = seq_cap(s, w)
    budget = e.max_batched_tokens
    z = z99()
    if cap < 1:
        return None
    if not e.chunked_prefill:
        return _separate(s, w, lam_r)

    def point(t: float, zz: float) -> tuple[float, float] | None:
        seqs = lam_r * t * steps * sh.pp
        seqs += zz * math.sqrt(seqs)
        arrivals = lam_r * t
        pf = fresh * (arrivals + zz * math.sqrt(arrivals / max(steps, 1.0)))
        dec = seqs / sh.pp
        if seqs > cap or dec * q + fresh * arrivals > budget:
            return None
        return dec, min(pf, max(budget - dec * q, 0.0))

    def g(t: float) -> float | None:
        pt = point(t, Z50)
        return None if pt is None else step_time(s, pt[0], dec_ctx, pt[1], pf_ctx).seconds

    t = _least_fixed_point(g)
    if t is None:
        return None
    hi = point(t, z) or point(t, Z50)
    assert hi is not None
    t99 = max(t, step_time(s, hi[0], dec_ctx, hi[1], pf_ctx).seconds)
    dec = lam_r * t * steps
    avail = budget - dec * q
    if avail <= 0:          # the decodes fill the token budget: no prompt can start
        return None
    rho = lam_r * t * fresh / avail
    service = fresh / avail * t
    wq = rho * service / (2 * (1 - rho)) if rho < 1 else math.inf
    tpot50, tpot99 = sh.pp * t / per_step, sh.pp * t99 / per_step

    def own(decoding: float, mean_step: float) -> float:
        """The steps that carry this prompt's own prefill, in chunks of what the decodes leave of the
        budget: each at least the mean step at this load, and as long as its own chunk makes it."""
        full, rest = int(fresh // avail), fresh - (fresh // avail) * avail
        chunks = [avail] * full + ([rest] if rest > 0 or not full else [])
        return sum(max(mean_step, step_time(s, decoding, dec_ctx, c, pf_ctx).seconds) for c in chunks)

    ttft50 = 0.5 * t + _tail(wq, rho, 0.5) + own(dec, t)
    ttft99 = 0.99 * t99 + _tail(wq, rho, 0.99) + own(hi[0], t99)
    slot50, slot99 = _slot_wait(cap, lam_r, ttft50 + steps * tpot50 * per_step)
    return Latency(ttft50 + slot50, ttft99 + slot99, tpot50, tpot99, dec * sh.pp)


def _slot_wait(cap: float, lam_r: float, service: float) -> tuple[float, float]:
    c = int(cap)
    a = lam_r * service
    if a <= 0:
        return 0.0, 0.0
    if a >= c:
        return math.inf, math.inf
    pw = erlang_c(c, a)
    rate = c / service - lam_r
    if rate <= 0:       # a service time so long that c / service rounds to the arrival rate: no steady state
        return math.inf, math.inf
    return _tail(pw / rate, pw, 0.5), _tail(pw / rate, pw, 0.99)


def _separate(s: ServingSetup, w: Workload, lam_r: float) -> Latency | None:
    """Prefill steps of whole prompts alternate with decode steps (no chunking)."""
    sh, e = s.shape, s.engine
    fresh = fresh_prompt(s, w)
    dec_ctx, pf_ctx = contexts(s, w)
    per_step = e.tokens_per_step
    steps = w.decode_steps(per_step)
    cap, _ = seq_cap(s, w)
    k = max(1.0, math.floor(e.max_batched_tokens / fresh)) if fresh else 1.0
    t_pf = step_time(s, 0, dec_ctx, k * fresh, pf_ctx).seconds
    rho = lam_r * t_pf / k
    if rho >= 1:
        return None

    def g(t: float) -> float | None:
        seqs = lam_r * t * steps * sh.pp / (1 - rho)
        if seqs > cap:
            return None
        return step_time(s, seqs / sh.pp, dec_ctx, 0, pf_ctx).seconds

    t = _least_fixed_point(g)
    if t is None:
        return None
    seqs = lam_r * t * steps * sh.pp / (1 - rho)
    t99 = step_time(s, min(cap, seqs + z99() * math.sqrt(seqs)) / sh.pp, dec_ctx, 0, pf_ctx).seconds
    own = step_time(s, 0, dec_ctx, fresh, pf_ctx).seconds
    wq = rho * (t_pf / k) / (2 * (1 - rho))
    tpot50, tpot99 = sh.pp * t / (1 - rho) / per_step, sh.pp * t99 / (1 - rho) / per_step
    return Latency(0.5 * t + _tail(wq, rho, 0.5) + own, 0.99 * t99 + _tail(wq, rho, 0.99) + own,
                   tpot50, tpot99, seqs)


def prefill_pool(s: ServingSetup, w: Workload, lam: float) -> Latency | None:
    """TTFT of one prefill-only replica at `lam` requests/s: M/D/1 over its prompt throughput."""
    fresh = fresh_prompt(s, w)
    rate, _ = prefill_rate(s, w)
    service = fresh / rate * s.shape.dp if rate > 0 else math.inf   # per rank
    rho = lam / s.shape.dp * service
    if rho >= 1:
        return None
    wq = rho * service / (2 * (1 - rho))
    own = step_time(s, 0, 0, max(fresh, rho * s.engine.max_batched_tokens), contexts(s, w)[1]).seconds
    return Latency(_tail(wq, rho, 0.5) + own, _tail(wq, rho, 0.99) + own, 0.0, 0.0, 0.0)


def decode_pool(s: ServingSetup, w: Workload, lam: float) -> Latency | None:
    """TPOT of one decode-only replica at `lam` requests/s."""
    sh = s.shape
    lam_r = lam / sh.dp
    per_step = s.engine.tokens_per_step
    steps = w.decode_steps(per_step)
    cap, _ = seq_cap(s, w)
    ctx = contexts(s, w)[0]

    def g(t: float) -> float | None:
        seqs = lam_r * t * steps * sh.pp
        return None if seqs > cap else step_time(s, seqs / sh.pp, ctx, 0, 0).seconds

    t = _least_fixed_point(g)
    if t is None:
        return None
    seqs = lam_r * t * steps * sh.pp
    t99 = step_time(s, min(cap, seqs + z99() * math.sqrt(seqs)) / sh.pp, ctx, 0, 0).seconds
    return Latency(0.0, 0.0, sh.pp * t / per_step, sh.pp * t99 / per_step, seqs)


def closed_loop(s: ServingSetup, w: Workload, clients: float) -> tuple[float, Latency] | None:
    """A closed loop of `clients` users, each sending its next request when the last one ends (benchmark
    concurrency sweeps): the request rate lam with lam x (TTFT + (O-1) x TPOT) = clients (Little's law),
    by bisection (the left side grows with lam). Returns (lam, latency at lam); None if no load fits."""
    def held(lam: float) -> float | None:
        lat = aggregated(s, w, lam)
        if lat is None:
            return None
        return lam * (lat.ttft_p50_s + max(w.output - 1, 0.0) * lat.tpot_p50_s)

    lo, hi = 0.0, 1.0
    while (h := held(hi)) is not None and h < clients:
        lo, hi = hi, hi * 2
        if hi > 1e9:
            return None
    for _ in range(60):
        mid = (lo + hi) / 2
        h = held(mid)
        lo, hi = (mid, hi) if h is not None and h < clients else (lo, mid)
    lat = aggregated(s, w, lo) if lo > 0 else None
    return None if lat is None else (lo, lat)
