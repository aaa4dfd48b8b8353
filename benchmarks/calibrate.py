"""Fit the estimator's training constants to every published run (tests/training_runs.py) except the
held-out-only sources (`HELD_OUT_ONLY`): one set per
GPU type and precision, inside `training.bounds`, plus the shared scale constants; print them, and with
--write put them into validator/data/efficiency.yaml (`training.sets` / `training.shared`), with each
set's run count and held-out uncertainty when benchmarks/accuracy_training.py has measured it.

Run: python benchmarks/calibrate.py [--rounds 3] [--iters 300] [--write] [--uncertainty FILE.json] [--keep]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fit import Fit, fit_all, own_key  # noqa: E402
from tests.training_runs import fit_runs  # noqa: E402

YAML = ROOT / "validator" / "data" / "efficiency.yaml"


def render_sets(fit: Fit, counts: dict[str, int], uncertainty: dict[str, float]) -> str:
    lines = ["  sets:"]
    for key in sorted(fit.sets):
        v = fit.sets[key]
        body = ", ".join(f"{k}: {v[k]:.4g}" for k in v)
        unc = uncertainty.get(key)
        extra = f", uncertainty: {unc:.3g}" if unc is not None else ""
        lines.append(f"    {key}: {{{body}, runs: {counts.get(key, 0)}{extra}}}")
    return "\n".join(lines) + "\n"


def write(fit: Fit, counts: dict[str, int], uncertainty: dict[str, float]) -> None:
    text = YAML.read_text(encoding="utf-8")
    shared = ", ".join(f"{k}: {v:.4g}" for k, v in fit.shared.items())
    text = re.sub(r"  shared: \{[^}]*\}\n", f"  shared: {{{shared}}}\n", text, count=1)
    text = re.sub(r"  sets:(?: \{\}\n|\n(?:    .*\n)+)", render_sets(fit, counts, uncertainty), text, count=1)
    YAML.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--uncertainty", type=Path, help="per-set held-out uncertainty from accuracy_training.py")
    parser.add_argument("--keep", action="store_true", help="keep the shipped constants (with --uncertainty)")
    opts = parser.parse_args()
    selected = fit_runs()
    if opts.keep:
        from benchmarks.accuracy_training import shipped

        fit = shipped()
    else:
        fit = fit_all(selected, opts.rounds, opts.iters, log=lambda m: print(m, flush=True))
    counts: dict[str, int] = {}
    for r in selected:
        counts[own_key(r)] = counts.get(own_key(r), 0) + 1
    uncertainty = json.loads(opts.uncertainty.read_text()) if opts.uncertainty else {}
    if opts.write:
        write(fit, counts, uncertainty)
        print(f"written to {YAML.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
