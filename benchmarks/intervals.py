"""The intervals printed beside every estimate (validator/data/intervals.yaml), from the held-out errors
of published runs, and their coverage measured honestly.

Training: each run's leave-one-source-out error (benchmarks/accuracy_training.py --json FILE: the
constants refitted without the run's source family). Serving: the rows of sources the serving fit never
sees (tests/serving_published.IN_SAMPLE is the only fitted set) and the TensorRT-LLM v0.9 rows.
Each class's interval is a pair of quantiles of r = published / estimated: the narrowest of `LEVELS` whose
interval, rebuilt from the other sources, covers at least 80 % of the class's points (the widest, min-max,
when none does).
Coverage is measured one more level out: for each source, the interval is recomputed from the other
sources' errors of the class, and the source's points are checked against it (a source never
contributes to the interval it is judged by).

Run: python benchmarks/intervals.py --training-json FILE [--write] [--markdown FILE] [--level 0.05 0.95]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fit import own_key  # noqa: E402
from tests.published import error as static_error  # noqa: E402
from tests.published import published_value, rows  # noqa: E402
from tests.serving_published import cases, estimate  # noqa: E402
from tests.training_runs import fit_runs, runs  # noqa: E402
from validator.derive.estimate.constants import training_table  # noqa: E402

LEVEL = (0.05, 0.95)
LEVEL_NOW = list(LEVEL)        # --level overrides it
OUT = ROOT / "validator" / "data" / "intervals.yaml"
# (class, source, point id, r = published / estimated)
Point = tuple[str, str, str, float]


def quantile(values: list[float], q: float) -> float:
    v = sorted(values)
    x = q * (len(v) - 1)
    i = math.floor(x)
    j = min(i + 1, len(v) - 1)
    return v[i] + (v[j] - v[i]) * (x - i)


def band(values: list[float], level: tuple[float, float] | None = None) -> tuple[float, float]:
    lo, hi = level or (LEVEL_NOW[0], LEVEL_NOW[1])
    return quantile(values, lo), quantile(values, hi)


def training_points(held_out: dict[str, float]) -> list[Point]:
    all_runs = list(runs())
    out = []
    for r in all_runs:
        rest = {own_key(x) for x in all_runs if x.family != r.family}
        cls = "uncalibrated" if own_key(r) not in rest else "moe" if r.setup.model.moe else "dense"
        out.append((cls, r.family, r.id, 1 / (1 + held_out[r.id])))
    return out


def serving_points() -> list[Point]:
    out = []
    for c in cases():
        if c.split != "held-out":
            continue
        est = estimate(c)
        if not (est > 0 and math.isfinite(est)):
            continue
        cls = {"ttft_ms": "ttft", "tpot_ms": "tpot"}.get(c.metric) or \
            ("throughput_moe" if c.setup.model.moe else "throughput_dense")
        out.append((cls, c.source, c.id, c.published / est))
    for r in rows():
        if r.kind != "inference":
            continue
        metric, _ = published_value(r)
        cls = "ttft" if metric == "ttft_ms" else "throughput_dense"
        edition = "TensorRT-LLM v0.5" if r.id.startswith("I-TRT5") else "TensorRT-LLM v0.9"
        out.append((cls, edition, r.id, 1 / (1 + static_error(r))))
    return out


# Levels tried per class, narrowest first: the first whose interval, rebuilt from the other sources,
# covers >= TARGET of a class's held-out points is shipped (the widest when none does)
LEVELS = ((0.05, 0.95), (0.025, 0.975), (0.0, 1.0))
TARGET = 0.80


def _covered(sel: list[Point], level: tuple[float, float]) -> tuple[int, int]:
    """(inside the interval of the other sources, inside the interval of all) of a class's points."""
    lo_all, hi_all = band([p[3] for p in sel], level)
    inside = shipped = 0
    for p in sel:
        others = [q[3] for q in sel if q[1] != p[1]]
        lo, hi = band(others, level) if len(others) >= 3 else (math.inf, -math.inf)
        inside += lo <= p[3] <= hi
        shipped += lo_all <= p[3] <= hi_all
    return inside, shipped


def level_of(sel: list[Point]) -> tuple[float, float]:
    if list(LEVEL) != LEVEL_NOW:        # --level: one level for every class
        return LEVEL_NOW[0], LEVEL_NOW[1]
    return next((lv for lv in LEVELS if _covered(sel, lv)[0] >= TARGET * len(sel)), LEVELS[-1])


def classes(points: list[Point]) -> dict[str, dict[str, float]]:
    out = {}
    for cls in sorted({p[0] for p in points}):
        sel = [p for p in points if p[0] == cls]
        level = level_of(sel)
        lo, hi = band([p[3] for p in sel], level)
        out[cls] = {"n": len(sel), "low": round(lo, 3), "high": round(hi, 3), "level": list(level)}
    return out


def coverage(points: list[Point]) -> dict[str, tuple[int, int, int]]:
    """Per class at its shipped level: (points, inside the interval of the other sources, inside the
    shipped interval)."""
    out = {}
    for cls in sorted({p[0] for p in points}):
        sel = [p for p in points if p[0] == cls]
        inside, shipped = _covered(sel, level_of(sel))
        out[cls] = (len(sel), inside, shipped)
    return out


def _range(values: Iterable[float]) -> list[float]:
    v = list(values)
    return [min(v), max(v)]


def envelopes() -> dict[str, dict[str, object]]:
    all_runs = list(fit_runs())      # the runs the constants were fitted on
    sets = sorted(training_table().sets)
    training = {"gpus": _range(r.setup.gpus for r in all_runs),
                "sequence_length": _range(r.setup.seq for r in all_runs),
                "params_b": _range(r.setup.model.params_b for r in all_runs), "constants": sets,
                "zero_stage": sorted({f"zero-{r.setup.sharding.stage}" for r in all_runs})}
    cs = cases()
    serving = {"gpu": sorted({c.setup.gpu.id for c in cs}), "params_b": _range(c.setup.model.params_b for c in cs),
               "engine": sorted({c.setup.engine.name for c in cs}),
               "mode": sorted({"disaggregated" if c.kind in ("prefill", "decode") else "aggregated" for c in cs}),
               "prompt_tokens": _range(c.workload.prompt for c in cs),
               "output_tokens": _range(c.workload.output for c in cs)}
    return {"training": training, "serving": serving}


def render(train: list[Point], serve: list[Point]) -> str:
    env = envelopes()
    lines = ["# Intervals printed beside every estimate: quantiles of r = published / estimated over the held-out",
             "# errors of published runs (each estimated without its source in the fit). Generated by",
             "# benchmarks/intervals.py; do not edit by hand. docs/estimator.md, Intervals.",
             "source: benchmarks/intervals.py over tests/reference/ (training-runs.csv, published-runs.csv, "
             "serving-runs.csv)",
             f"level: [{LEVEL_NOW[0]}, {LEVEL_NOW[1]}]   # the narrowest tried; each class's own: level"]
    for kind, pts in (("training", train), ("serving", serve)):
        lines += [f"{kind}:", "  classes:"]
        for cls, c in classes(pts).items():
            lines.append(f"    {cls}: {{n: {c['n']}, low: {c['low']}, high: {c['high']}, level: {c['level']}}}")
        lines.append("  envelope:")
        for key, value in env[kind].items():
            lines.append(f"    {key}: {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def table(train: list[Point], serve: list[Point]) -> list[str]:
    lines = ["| kind | class | held-out points | percentiles | interval (r = published / estimated) | "
             "coverage, interval from the other sources | coverage, shipped interval |",
             "|---|---|---|---|---|---|---|"]
    for kind, pts in (("training", train), ("serving", serve)):
        bands = classes(pts)
        cov = coverage(pts)
        for cls, (n, inside, shipped) in cov.items():
            b = bands[cls]
            lv = "-".join(f"{100 * x:g}" for x in b["level"])
            lines.append(f"| {kind} | {cls} | {n} | {lv} | {b['low']:.2f}-{b['high']:.2f} | "
                         f"{inside} ({100 * inside / n:.0f} %) | {100 * shipped / n:.0f} % |")
        n, inside, shipped = (sum(v[i] for v in cov.values()) for i in range(3))
        lines.append(f"| {kind} | all | {n} | - | - | {inside} ({100 * inside / n:.0f} %) | "
                     f"{100 * shipped / n:.0f} % |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--training-json", type=Path, required=True, help="accuracy_training.py --json output")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--level", type=float, nargs=2, default=None, help="lower and upper quantile")
    opts = parser.parse_args()
    if opts.level:
        LEVEL_NOW[:] = opts.level
    held_out = json.loads(opts.training_json.read_text())["held_out"]
    train, serve = training_points(held_out), serving_points()
    text = "\n".join(table(train, serve))
    print(text)
    if opts.markdown:
        opts.markdown.write_text(text + "\n", encoding="utf-8")
    if opts.write:
        OUT.write_text(render(train, serve), encoding="utf-8")


if __name__ == "__main__":
    main()
