"""INF007 latency-targets: Estimated TTFT and TPOT meet the targets."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def latency_targets(ctx: Context) -> Iterator[Hit]:
    """The estimated time to first token (batch 1, plus the KV transfer when disaggregated) and time per
    output token (at the batch the KV cache allows) meet the design's targets.

    Source: the clusterplan estimator (`clusterplan estimate`), checked against TensorRT-LLM v0.9
    published latencies and throughput (benchmarks/accuracy.py).
    Fix: use more GPUs per replica (higher TP), FP8 weights, a smaller batch per replica, or faster GPUs.
    Example:
        inference: {targets: {ttft_ms: 1}}   # no prefill finishes in 1 ms
    """
    targets = ctx.inference.targets
    est = ctx.estimate
    if targets.ttft_ms is not None and est["ttft_ms"] > targets.ttft_ms:
        yield Hit(f"estimated TTFT {est['ttft_ms']:,.0f} ms > target {targets.ttft_ms:g} ms",
                  ("inference", "targets", "ttft_ms"))
    if targets.tpot_ms is not None and est["tpot_ms"] > targets.tpot_ms:
        yield Hit(f"estimated TPOT {est['tpot_ms']:.1f} ms at batch {est['batch']} > target {targets.tpot_ms:g} ms",
                  ("inference", "targets", "tpot_ms"))


RULE = Rule("INF007", "latency-targets", "Estimated TTFT and TPOT meet the targets", "error", "inference",
            latency_targets)
