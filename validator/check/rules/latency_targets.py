"""INF007 latency-targets: TTFT and TPOT at the target load meet the SLOs."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def latency_targets(ctx: Context) -> Iterator[Hit]:
    """At the target load (targets.qps or output_tokens_per_s, with headroom) spread over the planned
    replicas, the estimated p99 and median time to first token (queueing, prefill, KV transfer) and
    time per output token (continuous batching at that load) meet the targets; without a target load,
    a lightly loaded replica must. A fleet too small to carry the load at all is INF008's finding.

    Source: the clusterplan serving estimator (docs/estimator.md, Inference), checked against published
    serving results (benchmarks/accuracy_inference.py); MLPerf Inference server scenario (p99 TTFT and
    TPOT under Poisson arrivals).
    Fix: add replicas, use more GPUs per replica (higher TP), FP8 weights, a smaller token budget per
    step, or faster GPUs.
    Example:
        inference: {targets: {ttft_ms: 1}}   # no prefill finishes in 1 ms
    """
    t = ctx.inference.targets
    est = ctx.estimate.inference
    assert est is not None
    path = ("inference", "targets")
    limits = (("ttft_ms", "p99 TTFT", t.ttft_ms, est.ttft_ms), ("ttft_p50_ms", "median TTFT", t.ttft_p50_ms,
              est.ttft_p50_ms), ("tpot_ms", "p99 TPOT", t.tpot_ms, est.tpot_ms),
              ("tpot_p50_ms", "median TPOT", t.tpot_p50_ms, est.tpot_p50_ms))
    load = f"at {est.target_qps:.4g} requests/s" if est.target_qps else "at light load"
    for key, label, limit, value in limits:
        if limit is None or value is None:    # no finite latency: the fleet is too small, INF008's finding
            continue
        if value > limit:
            yield Hit(f"estimated {label} {value:,.1f} ms {load} > target {limit:g} ms", (*path, key))


RULE = Rule("INF007", "latency-targets", "TTFT and TPOT at the target load meet the SLOs", "error", "inference",
            latency_targets)
