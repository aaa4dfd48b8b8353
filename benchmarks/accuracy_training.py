"""Training estimator accuracy, honestly: per source family, the error of the shipped constants (in-sample:
every run was in the fit) next to the error of constants fitted without that family (held-out:
leave-one-family-out, the family's runs never seen; a GPU whose only runs are in that family falls
back to its lender's set, as an uncalibrated GPU would), and of constants fitted without a fixed fifth
of the runs (chosen by a hash of their id), on that fifth. Errors are on step time, each source compared
in its own FLOP convention (tests/training_runs.py).

Run: python benchmarks/accuracy_training.py [--runs] [--markdown FILE] [--json FILE] [--uncertainty FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.fit import Fit, fit_all, own_key  # noqa: E402
from tests.training_runs import FAMILIES, HELD_OUT_ONLY, Run, excluded, runs  # noqa: E402
from validator.derive.estimate.constants import training_table  # noqa: E402

GOAL_MEDIAN, GOAL_MAX = 0.07, 0.20


def shipped() -> Fit:
    t = training_table()
    return Fit({k: {n: float(x) for n, x in v.items() if n not in ("runs", "uncertainty")}
                for k, v in t.sets.items()}, dict(t.shared))


def rel(log_err: float) -> float:
    return math.exp(log_err) - 1


def held_out(all_runs: list[Run], base: Fit, iters: int, log: bool) -> dict[str, float]:
    """Relative error of every run under constants fitted without its family (a held-out-only source is
    never fitted: the shipped constants are already fitted without it)."""
    out: dict[str, float] = {r.id: rel(base.error(r)) for r in all_runs if r.family in HELD_OUT_ONLY}
    for family in sorted({r.family for r in all_runs} - set(HELD_OUT_ONLY)):
        rest = [r for r in all_runs if r.family != family and r.family not in HELD_OUT_ONLY]
        start = Fit({k: dict(v) for k, v in base.sets.items()}, dict(base.shared))
        keep = {own_key(r) for r in rest}
        start.sets = {k: v for k, v in start.sets.items() if k in keep}
        fit = fit_all(rest, rounds=1, iters=iters, start=start)
        for r in all_runs:
            if r.family == family:
                out[r.id] = rel(fit.error(r))
        if log:
            print(f"held out {family}", file=sys.stderr, flush=True)
    return out


def in_split(run: Run) -> bool:
    """The fixed split: a fifth of the runs, chosen by a hash of their id, never used in its fit."""
    return zlib.crc32(run.id.encode()) % 5 == 0


def split_held_out(all_runs: list[Run], base: Fit, iters: int) -> dict[str, float]:
    rest = [r for r in all_runs if not in_split(r) and r.family not in HELD_OUT_ONLY]
    start = Fit({k: dict(v) for k, v in base.sets.items()}, dict(base.shared))
    keep = {own_key(r) for r in rest}
    start.sets = {k: v for k, v in start.sets.items() if k in keep}
    fit = fit_all(rest, rounds=1, iters=iters, start=start)
    return {r.id: rel(fit.error(r)) for r in all_runs if in_split(r) and r.family not in HELD_OUT_ONLY}


def summary(values: list[float]) -> tuple[float, float]:
    a = [abs(v) for v in values]
    return statistics.median(a), max(a)


def in_sample_cells(values: list[float]) -> str:
    """In-sample median and max, or '-' for a source no fit has seen."""
    if not values:
        return "- | -"
    im, ix = summary(values)
    return f"{100 * im:.1f} % | {100 * ix:.1f} %"


def table(all_runs: list[Run], ins: dict[str, float], out: dict[str, float], split: dict[str, float]) -> list[str]:
    lines = ["| family | runs | GPUs | in-sample median | in-sample max | held-out median | held-out max | "
             "fixed split: runs, median, max | uncalibrated when held out |", "|---|---|---|---|---|---|---|---|---|"]
    labels = {fam: text for fam, text in FAMILIES.values()}
    fams = sorted({r.family for r in all_runs}, key=lambda f: list(labels).index(f))
    for fam in [*fams, "all"]:
        sel = [r for r in all_runs if fam in ("all", r.family)]
        hm, hx = summary([out[r.id] for r in sel])
        keys = sorted({own_key(r) for r in sel})
        rest = {own_key(r) for r in all_runs if r.family != fam and r.family not in HELD_OUT_ONLY}
        lost = [k for k in keys if k not in rest] if fam != "all" else []
        gpus = sorted({r.setup.gpu.id for r in sel}) if fam != "all" else ["all"]
        flag = "" if hm <= GOAL_MEDIAN and hx <= GOAL_MAX else " (misses)"
        held = [split[r.id] for r in sel if r.id in split]
        fixed = f"{len(held)}, {100 * summary(held)[0]:.1f} %, {100 * summary(held)[1]:.1f} %" if held else "-"
        fitted = in_sample_cells([ins[r.id] for r in sel if r.family not in HELD_OUT_ONLY])
        lines.append(f"| {fam}{flag} | {len(sel)} | {', '.join(gpus)} | {fitted} | "
                     f"{100 * hm:.1f} % | {100 * hx:.1f} % | {fixed} | {', '.join(lost) or '-'} |")
    return lines


def uncertainty(all_runs: list[Run], out: dict[str, float]) -> dict[str, float]:
    """Per set: the 90th percentile of its runs' held-out |error| (at least 5 %)."""
    by: dict[str, list[float]] = {}
    for r in all_runs:
        by.setdefault(own_key(r), []).append(abs(out[r.id]))
    result = {}
    for key, errs in by.items():
        errs.sort()
        result[key] = round(max(0.05, errs[min(len(errs) - 1, int(0.9 * len(errs)))]), 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", action="store_true", help="also print every run")
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--uncertainty", type=Path)
    opts = parser.parse_args()
    all_runs = list(runs())
    base = shipped()
    ins = {r.id: rel(base.error(r)) for r in all_runs}
    out = held_out(all_runs, base, opts.iters, log=True)
    split = split_held_out(all_runs, base, opts.iters)
    lines = table(all_runs, ins, out, split)
    if opts.runs:
        lines += ["", "| run | family | basis | published s | in-sample | held-out |", "|---|---|---|---|---|---|"]
        for r in all_runs:
            lines.append(f"| {r.id} | {r.family} | {r.basis.split(' (')[0]} | {r.step_time_s:.4g} | "
                         f"{100 * ins[r.id]:+.1f} % | {100 * out[r.id]:+.1f} % |")
    lines += ["", "Not compared:"] + [f"- {rid}: {why}" for rid, why in excluded()]
    text = "\n".join(lines)
    print(text)
    if opts.markdown:
        opts.markdown.write_text(text + "\n", encoding="utf-8")
    if opts.json:
        opts.json.write_text(json.dumps({"in_sample": ins, "held_out": out, "fixed_split": split}, indent=1,
                                        sort_keys=True))
    if opts.uncertainty:
        opts.uncertainty.write_text(json.dumps(uncertainty(all_runs, out), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
