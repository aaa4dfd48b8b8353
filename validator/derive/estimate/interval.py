"""How far to trust an estimate: a low-high interval on every headline figure, from the model's held-out
error on published runs of the same kind (validator/data/intervals.yaml, written by
benchmarks/intervals.py), and the ways a configuration lies outside everything the constants were
fitted on.

The held-out errors are ratios r = published / estimated (each published run estimated with constants
fitted without its source). The interval of a figure that scales like the published one (a step time,
a throughput, a latency) is [x r_low, x r_high]; of one that scales inversely with the step time
(MFU, tokens/s in training) [x / r_high, x / r_low], MFU never above 1. r_low and r_high are the class's
quantiles at its `level` (the 5th and 95th percentile, or the lowest and highest where a narrower pair
covers less than 80 % of held-out points from other sources)."""

from __future__ import annotations

from typing import Any

from validator.base.estimate_tables import intervals
from validator.base.facts import fact


@fact
class Trust:
    basis: str                                   # which held-out errors the intervals come from
    intervals: dict[str, tuple[float, float]]    # figure -> (low, high)
    outside_fit: tuple[str, ...] = ()            # ways the configuration is beyond every fitted run

    def as_dict(self) -> dict[str, Any]:
        return {"basis": self.basis, "intervals": {k: list(v) for k, v in self.intervals.items()},
                "outside_fit": list(self.outside_fit)}


def ratio_band(kind: str, cls: str) -> tuple[float, float, int]:
    """(r_low, r_high, n) of a class of held-out errors (`kind`: training | serving)."""
    c = intervals()[kind].classes[cls]
    return c.low, c.high, c.n


def _percentiles(kind: str, cls: str) -> str:
    lo, hi = intervals()[kind].classes[cls].level
    return "lowest-highest" if (lo, hi) == (0, 1) else f"{100 * lo:g}th-{100 * hi:g}th percentile"


def _same(x: float | None, lo: float, hi: float) -> tuple[float, float] | None:
    return None if x is None else (x * lo, x * hi)


def _inverse(x: float | None, lo: float, hi: float) -> tuple[float, float] | None:
    return None if x is None else (x / hi, x / lo)


def _basis(kind: str, cls: str, n: int) -> str:
    return (f"{kind} {cls}: {_percentiles(kind, cls)} of the held-out error of {n} published runs "
            "(validator/data/intervals.yaml)")


def _outside(kind: str, figures: dict[str, float | str]) -> tuple[str, ...]:
    """Reasons a configuration lies beyond the fitted runs: a number outside the envelope's range, or a
    category (GPU, precision, mode) no fitted run had."""
    env = intervals()[kind].envelope
    out = []
    for key, value in figures.items():
        if isinstance(value, str):
            seen = env.categories.get(key)
            if seen is not None and value not in seen:
                out.append(f"{key} {value}: no fitted run (fitted: {', '.join(map(str, seen))})")
        elif key in env.ranges:
            low, high = env.ranges[key]
            if not low <= value <= high:
                out.append(f"{key} {value:g} outside the fitted {low:g}-{high:g}")
    return tuple(out)


def training_trust(step_s: float, mfu: float, tokens_per_s: float, calibrated: bool, moe: bool,
                   figures: dict[str, float | str]) -> Trust:
    cls = "uncalibrated" if not calibrated else "moe" if moe else "dense"
    lo, hi, n = ratio_band("training", cls)
    mfu_band = _inverse(mfu, lo, hi)
    intervals = {"step_time_s": _same(step_s, lo, hi),
                 "mfu": None if mfu_band is None else (min(1.0, mfu_band[0]), min(1.0, mfu_band[1])),
                 "tokens_per_s": _inverse(tokens_per_s, lo, hi)}
    return Trust(_basis("training", cls, n), {k: v for k, v in intervals.items() if v is not None},
                 _outside("training", figures))


def serving_trust(values: dict[str, float | None], moe: bool, figures: dict[str, float | str]) -> Trust:
    """`values`: the headline figures by JSON key; throughput and capacity take the throughput class,
    TTFT and TPOT their own."""
    tput = "throughput_moe" if moe else "throughput_dense"
    classes = {"output_tokens_per_s_per_gpu": tput, "total_tokens_per_s_per_gpu": tput,
               "requests_per_s_per_replica": tput, "fleet_capacity_qps": tput,
               "ttft_ms": "ttft", "ttft_p50_ms": "ttft", "tpot_ms": "tpot", "tpot_p50_ms": "tpot"}
    intervals = {}
    for key, cls in classes.items():
        lo, hi, _ = ratio_band("serving", cls)
        band = _same(values.get(key), lo, hi)
        if band is not None:
            intervals[key] = band
    parts = [f"{what} the {_percentiles('serving', cls)} of {ratio_band('serving', cls)[2]} held-out "
             f"{cls.replace('_', ' ')} points" for what, cls in
             (("throughput and capacity:", tput), ("TTFT:", "ttft"), ("TPOT:", "tpot"))]
    basis = "serving: " + "; ".join(parts) + " (validator/data/intervals.yaml)"
    return Trust(basis, intervals, _outside("serving", figures))
