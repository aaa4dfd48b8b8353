"""INF008 fleet-capacity: The fleet at its largest carries the target load at the SLOs."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def fleet_capacity(ctx: Context) -> Iterator[Hit]:
    """The planned fleet (the fixed replica count, autoscaling.max, or each disaggregated pool) must
    carry the target load, with its headroom, while meeting every latency SLO; the finding names the
    replica count that would. Throughput counts every request's prefill (continuous batching), and the
    SLOs are checked at load by the queueing model.

    Source: the clusterplan serving estimator (docs/estimator.md, Inference); the sizing rule of NVIDIA
    Dynamo's SLA planner and AIConfigurator (the fewest replicas that meet the SLOs at the load).
    Fix: raise autoscaling.max (or replicas) to the count named, or relax the SLOs.
    Example:
        inference: {autoscaling: {min: 1, max: 2}, targets: {qps: 500}}
    """
    est = ctx.estimate.inference
    assert est is not None
    inf = ctx.inference
    if est.target_qps is None:
        return
    d = inf.disaggregation
    checks: list[tuple[str, tuple[str | int, ...], int, int | None]]
    if d is None:
        path: tuple[str | int, ...] = ("inference", "replicas") if inf.replicas else \
            ("inference", "autoscaling", "max") if inf.autoscaling else ("inference", "replica")
        checks = [("replicas", path, est.replicas_planned, est.replicas_needed)]
    else:
        base = ("inference", "disaggregation")
        checks = [("prefill replicas", (*base, "prefill", "replicas"), est.prefill_replicas_planned or 0,
                   est.prefill_replicas_needed),
                  ("decode replicas", (*base, "decode", "replicas"), est.replicas_planned, est.replicas_needed)]
    for noun, path, planned, needed in checks:
        if needed is None:
            yield Hit(f"no number of {noun} meets the SLOs at {est.target_qps:.4g} requests/s (one replica's "
                      "latency alone exceeds them)", path)
        elif planned < needed:
            yield Hit(f"{planned} {noun} carry {est.fleet_capacity_qps:.4g} requests/s at the SLOs; the target "
                      f"{est.target_qps:.4g} requests/s (headroom included) needs {needed}", path)


RULE = Rule("INF008", "fleet-capacity", "The fleet at its largest carries the target load at the SLOs", "error",
            "inference", fleet_capacity)
