"""Estimator accuracy against published runs: runs benchmarks/accuracy_training.py (per source family,
in-sample and leave-one-family-out held-out error) and, when present, benchmarks/accuracy_inference.py.
Without it, the inference rows of tests/reference/published-runs.csv are printed with their error.

Run: python benchmarks/accuracy.py [--training-only] [arguments of accuracy_training.py]
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def legacy_inference() -> None:
    from tests.published import error, estimated_value, published_value, rows

    print(f"\n{'run':26} {'metric':28} {'published':>12} {'estimated':>12} {'error':>9}")
    for row in rows():
        metric, published = published_value(row)
        print(f"{row.id:26} {metric:28} {published:12.4g} {estimated_value(row, metric):12.4g} "
              f"{error(row) * 100:+8.2f} %")


def main() -> None:
    training_only = "--training-only" in sys.argv
    argv = [a for a in sys.argv[1:] if a != "--training-only"]
    sys.argv = [str(HERE / "accuracy_training.py"), *argv]
    runpy.run_path(str(HERE / "accuracy_training.py"), run_name="__main__")
    if training_only:
        return
    inference = HERE / "accuracy_inference.py"
    if inference.exists() and importlib.util.find_spec("benchmarks") is not None:
        sys.argv = [str(inference)]
        runpy.run_path(str(inference), run_name="__main__")
    else:
        legacy_inference()


if __name__ == "__main__":
    main()
