"""Fitting the training constants: one set per GPU and precision, bounded to physically plausible ranges,
with a weak pull toward the prior (so a set with two runs cannot wander), and the two scale constants
fitted on every run at once. Used by calibrate.py (in-sample, written to efficiency.yaml) and by
accuracy_training.py (leave-one-source-family-out, never written)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tests.training_runs import Run
from validator.derive.estimate.constants import (
    FITTED,
    SHARED,
    bounds,
    make_training_constants,
    resolve_set,
    training_table,
)
from validator.derive.estimate.training import estimate_training

PRIOR_WEIGHT = 0.02      # strength of the pull toward the prior, per (normalised) constant
MAX_WEIGHT = 0.2         # weight of a set's worst run next to its families' mean error


def own_key(run: Run) -> str:
    alias = training_table().precision_alias
    return f"{run.setup.gpu.id}/{alias.get(run.setup.precision, run.setup.precision)}"


def log_error(run: Run, values: dict[str, float], sets: dict[str, dict[str, float]] | None = None) -> float:
    key = own_key(run) if sets is None else resolve_set(sets, run.setup.gpu.id, run.setup.precision)[0]
    c = make_training_constants(values, key, True, 0.0)
    return math.log(estimate_training(run.setup, c).step_time_s / run.step_time_s)


def objective(errors: Sequence[tuple[str, float]]) -> float:
    """Mean over families of the mean |log error|, plus a share of the worst run."""
    by: dict[str, list[float]] = {}
    for fam, e in errors:
        by.setdefault(fam, []).append(abs(e))
    if not by:
        return 0.0
    return statistics.mean(statistics.mean(v) for v in by.values()) + MAX_WEIGHT * max(max(v) for v in by.values())


def nelder_mead(f: Callable[[list[float]], float], x0: list[float], step: list[float], iters: int = 600,
                tol: float = 1e-6) -> tuple[list[float], float]:
    """Plain Nelder-Mead (deterministic; no SciPy needed)."""
    n = len(x0)
    simplex = [list(x0)] + [[x0[j] + (step[j] if j == i else 0.0) for j in range(n)] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: values[i])
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if abs(values[-1] - values[0]) < tol:
            break
        centroid = [sum(x[j] for x in simplex[:-1]) / n for j in range(n)]
        worst = simplex[-1]
        refl = [centroid[j] + (centroid[j] - worst[j]) for j in range(n)]
        fr = f(refl)
        if fr < values[0]:
            exp = [centroid[j] + 2 * (centroid[j] - worst[j]) for j in range(n)]
            fe = f(exp)
            simplex[-1], values[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = refl, fr
        else:
            con = [centroid[j] + 0.5 * (worst[j] - centroid[j]) for j in range(n)]
            fc = f(con)
            if fc < values[-1]:
                simplex[-1], values[-1] = con, fc
            else:
                best = simplex[0]
                simplex = [best] + [[best[j] + 0.5 * (x[j] - best[j]) for j in range(n)] for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    i = min(range(n + 1), key=lambda k: values[k])
    return simplex[i], values[i]


def _clamp(names: Sequence[str], u: Sequence[float]) -> dict[str, float]:
    """Unit-cube coordinates -> constants inside their bounds."""
    b = bounds()
    return {k: b[k][0] + (b[k][1] - b[k][0]) * min(1.0, max(0.0, x)) for k, x in zip(names, u, strict=True)}


def _unit(names: Sequence[str], values: dict[str, float]) -> list[float]:
    b = bounds()
    return [(values[k] - b[k][0]) / (b[k][1] - b[k][0]) for k in names]


def _penalty(names: Sequence[str], u: Sequence[float]) -> float:
    prior = _unit(names, {**training_table().prior, **training_table().shared})
    return PRIOR_WEIGHT * sum((a - p) ** 2 for a, p in zip(u, prior, strict=True))


@dataclass
class Fit:
    sets: dict[str, dict[str, float]]
    shared: dict[str, float]

    def values(self, key: str) -> dict[str, float]:
        return {**training_table().prior, **self.shared, **self.sets.get(key, {})}

    def error(self, run: Run) -> float:
        key, _ = resolve_set(self.sets, run.setup.gpu.id, run.setup.precision)
        return log_error(run, self.values(key), self.sets)


def fit_set(runs: Sequence[Run], shared: dict[str, float], start: dict[str, float], iters: int) -> dict[str, float]:
    names = list(FITTED)

    def f(u: list[float]) -> float:
        values = {**shared, **_clamp(names, u)}
        return objective([(r.family, log_error(r, values)) for r in runs]) + _penalty(names, u)

    u, _ = nelder_mead(f, _unit(names, start), [0.15] * len(names), iters)
    return {k: round(v, 4) for k, v in _clamp(names, u).items()}


def fit_shared(runs: Sequence[Run], fit: Fit, iters: int) -> dict[str, float]:
    names = list(SHARED)
    keys = {r.id: own_key(r) for r in runs}

    def f(u: list[float]) -> float:
        shared = _clamp(names, u)
        errs = [(r.family, log_error(r, {**fit.values(keys[r.id]), **shared})) for r in runs]
        return objective(errs) + _penalty(names, u)

    u, _ = nelder_mead(f, _unit(names, fit.shared), [0.2] * len(names), iters)
    return {k: round(v, 4) for k, v in _clamp(names, u).items()}


def fit_all(runs: Iterable[Run], rounds: int = 2, iters: int = 500, start: Fit | None = None,
            log: Callable[[str], None] = lambda _: None) -> Fit:
    runs = list(runs)
    groups: dict[str, list[Run]] = {}
    for r in runs:
        groups.setdefault(own_key(r), []).append(r)
    t = training_table()
    fit = start or Fit({}, dict(t.shared))
    for rnd in range(rounds):
        for key in sorted(groups):
            begin = fit.sets.get(key) or dict(t.prior)
            fit.sets[key] = fit_set(groups[key], fit.shared, begin, iters)
            log(f"round {rnd + 1} {key:24} n={len(groups[key]):3} {fit.sets[key]}")
        fit.shared = fit_shared(runs, fit, iters)
        log(f"round {rnd + 1} shared {fit.shared}")
    return fit
