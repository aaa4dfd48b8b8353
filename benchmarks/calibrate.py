"""Fit the estimator's efficiency constants for one GPU type and precision to the published runs of
that hardware (coordinate descent on the mean absolute error). Prints the constants and the errors;
copy them into validator/data/efficiency.yaml with a note. Run: python benchmarks/calibrate.py a100
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.published import error, inference_setup, rows, training_setup
from validator.derive.estimate.constants import constants_for


def errors(constants, selected):
    return [(r.id, error(r, constants)) for r in selected]


def objective(constants, selected):
    """Mean plus a third of the maximum absolute error, per source, summed over the sources."""
    by_source: dict[str, list[float]] = {}
    for rid, err in errors(constants, selected):
        by_source.setdefault(rid.split("-")[1] if "TTFT" not in rid else "TTFT", []).append(abs(err))
    # throughput-style sources (Narayanan, NeMo) only need to stay inside their tolerance band
    band = {"NAR1": 0.08, "NEMO": 0.025, "TRT9": 0.2, "TTFT": 0.2}
    score = 0.0
    for source, errs in by_source.items():
        if source in band:
            score += sum(max(0.0, e - band[source]) for e in errs) * 10 + 0.1 * sum(errs) / len(errs)
        else:
            score += sum(errs) / len(errs) + 0.3 * max(errs)
    return score


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "a100"
    prefix = {"a100": ("T-KOR", "T-NAR"), "h100": ("T-NEMO",), "infer-h100": ("I-TRT9-H100", "I-TRT9-TTFT-H100"),
              "infer-h200": ("I-TRT9-H200",), "infer-a100": ("I-TRT9-A100", "I-TRT9-TTFT-A100")}[which]
    selected = [r for r in rows() if r.id.startswith(prefix)]
    if which.startswith("infer"):
        s0 = inference_setup(selected[0])
        c = constants_for(s0.gpu.id, s0.weight_precision)
        fields = {"decode_memory_efficiency": (0.2, 0.9), "prefill_efficiency": (0.1, 0.9),
                  "layer_overhead_s": (0.0, 0.001)}
    else:
        s0 = training_setup(selected[0])
        c = constants_for(s0.gpu.id, s0.precision)
        fields = {"gemm_max": (0.3, 0.95), "gemm_half_gflop": (0.5, 400), "elementwise_factor": (0.0, 8.0),
                  "tp_exposed": (0.0, 1.0), "dp_overlap": (0.0, 1.0), "pp_exposed": (0.0, 2.0)}
    from scipy.optimize import minimize  # calibration only; not a runtime dependency

    names = list(fields)

    def f(x):
        vals = {k: min(fields[k][1], max(fields[k][0], v)) for k, v in zip(names, x, strict=True)}
        return objective(dataclasses.replace(c, **vals), selected)

    best_x, best = None, float("inf")
    for start in ([getattr(c, k) for k in names], [0.7, 5, 2, 1, 0.5, 1], [0.8, 20, 1, 0.8, 0.8, 0.5],
                  [0.5, 0.5, 0.0001], [0.8, 0.45, 0.0001]):
        if len(start) != len(names):
            continue
        res = minimize(f, start, method="Nelder-Mead", options={"maxiter": 3000, "xatol": 1e-4})
        if res.fun < best:
            best_x, best = res.x, res.fun
    c = dataclasses.replace(c, **{k: min(fields[k][1], max(fields[k][0], v))
                                  for k, v in zip(names, best_x, strict=True)})
    print({k: float(f"{getattr(c, k):.4g}") for k in fields}, "objective", round(float(best), 4))
    for rid, err in errors(c, selected):
        print(f"{rid:22} {err * 100:+6.2f}{'%' if not rid.startswith('T-NEMO') else ' pt'}")


if __name__ == "__main__":
    main()
