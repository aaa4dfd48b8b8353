"""Fleet sizing at the SLOs: the fewest replicas whose latency at load meets every target, and the
most load a given fleet carries at them (the latency of a replica only grows with its load, so both
are found by bisection)."""

from __future__ import annotations

import math
from collections.abc import Callable

from validator.base.facts import fact
from validator.derive.estimate.queueing import Latency

LatencyAt = Callable[[float], Latency | None]     # latency of one replica at a load in requests/s
MAX_REPLICAS = 1_000_000


@fact
class Slo:
    ttft_p50_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p99_s: float | None = None

    def met(self, lat: Latency | None, extra_ttft_s: float = 0.0) -> bool:
        if lat is None:
            return False
        pairs = ((self.ttft_p50_s, lat.ttft_p50_s + extra_ttft_s), (self.ttft_p99_s, lat.ttft_p99_s + extra_ttft_s),
                 (self.tpot_p50_s, lat.tpot_p50_s), (self.tpot_p99_s, lat.tpot_p99_s))
        return all(limit is None or value <= limit for limit, value in pairs)


def replicas_for(latency: LatencyAt, load: float, slo: Slo, extra_ttft_s: float = 0.0) -> int | None:
    """Fewest replicas that meet the SLO at `load` requests/s split evenly; None if none can."""
    if load <= 0:
        return 0

    def ok(n: int) -> bool:
        return slo.met(latency(load / n), extra_ttft_s)

    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > MAX_REPLICAS:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def capacity(latency: LatencyAt, replicas: int, slo: Slo, ceiling: float, extra_ttft_s: float = 0.0) -> float:
    """Most requests/s `replicas` replicas carry at the SLO (below `ceiling`, the saturated rate)."""
    if replicas <= 0 or ceiling <= 0 or not math.isfinite(ceiling):
        return 0.0
    lo, hi = 0.0, ceiling
    if not slo.met(latency(1e-9), extra_ttft_s):
        return 0.0
    while hi - lo > 1e-7 * ceiling:      # seven significant digits of the saturated rate
        mid = (lo + hi) / 2
        if slo.met(latency(mid), extra_ttft_s):
            lo = mid
        else:
            hi = mid
    return lo * replicas
