"""Estimator accuracy against published runs: prints one row per run of
shared/reference/published-runs.csv with its error, then the mean and maximum error per source.
Run: python benchmarks/accuracy.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.published import error, estimated_value, published_value, rows

GROUPS = {"T-KOR5": "Korthikanti Table 5, iteration time", "T-NAR1": "Narayanan Table 1, TFLOP/s per GPU",
          "T-NEMO": "NeMo 24.07 FP8, MFU (points)", "I-TRT9-TTFT": "TensorRT-LLM v0.9, first-token latency",
          "I-TRT9": "TensorRT-LLM v0.9, output tokens/s per GPU"}


def group_of(row_id: str) -> str:
    return next(g for g in GROUPS if row_id.startswith(g))


def main() -> None:
    by_group: dict[str, list[float]] = {}
    print(f"{'run':26} {'metric':28} {'published':>12} {'estimated':>12} {'error':>9}")
    for row in rows():
        metric, published = published_value(row)
        est = estimated_value(row, metric)
        err = error(row)
        unit = " pt" if metric == "mfu" else " %"
        print(f"{row.id:26} {metric:28} {published:12.4g} {est:12.4g} {err * 100:+8.2f}{unit}")
        by_group.setdefault(group_of(row.id), []).append(abs(err) * 100)
    print()
    for g, errs in by_group.items():
        print(f"{GROUPS[g]:45} n={len(errs):2}  mean {sum(errs) / len(errs):5.2f}  max {max(errs):5.2f}")


if __name__ == "__main__":
    main()
