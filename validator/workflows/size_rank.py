"""Rank the survivors of `clusterplan size` by each objective, validate the best in full, and write them.

    smallest   fewest GPUs
    capex      lowest capex (the BOM total; a design with unpriced lines ranks last)
    tco        lowest cost of ownership: a training run's (its busy GPU-hours x the cost of a busy GPU-hour,
               validator/derive/cost.py), an inference fleet's per year
    fastest    training: fewest days to train; inference: lowest p99 TTFT + output_tokens x p99 TPOT

Ties go to the other objectives in this order, then to the point's order (server, fabric, TP, PP, CP, EP,
DP): the answer never depends on the order work was done in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from validator.base.paths import display_name
from validator.read.config import RunConfig
from validator.read.sizing import SizingRequest
from validator.resolve.catalog import Catalog
from validator.workflows.size import Candidate, Search, cost_figures, estimate_figures
from validator.workflows.size_space import design_yaml, space

OBJECTIVES = ("smallest", "capex", "tco", "fastest")
_METRIC = {"smallest": "gpus", "capex": "capex_usd", "tco": "tco_usd"}


def metric(objective: str, kind: str) -> str:
    return _METRIC.get(objective) or ("days" if kind == "training" else "latency_ms")


def rank(candidates: list[Candidate], objective: str, kind: str) -> list[Candidate]:
    """The feasible candidates, best first: by the objective's figure, then by the other objectives' in the
    order of OBJECTIVES, then by the point; an unknown figure (None) ranks after every known one."""
    names = [metric(objective, kind)] + [metric(o, kind) for o in OBJECTIVES if o != objective]

    def key(c: Candidate) -> tuple[Any, ...]:
        values = [c.figures.get(n) for n in names]
        return (*((v is None, v or 0) for v in values), c.point)

    return sorted((c for c in candidates if c.rejected is None), key=key)


@dataclass
class SizeResult:
    request: SizingRequest
    file: str
    kind: str
    candidates: list[Candidate]
    best: dict[str, list[Candidate]]

    def rejections(self) -> list[tuple[str, int, Candidate]]:
        """(reason, how many points it rejected, the smallest of them), most frequent first."""
        groups: dict[str, list[Candidate]] = {}
        for c in self.candidates:
            if c.rejected is not None:
                groups.setdefault(c.rejected.code, []).append(c)
        out = [(code, len(cs), min(cs, key=lambda c: (c.point.tp * c.point.pp * c.point.cp * c.point.dp, c.point)))
               for code, cs in groups.items()]
        return sorted(out, key=lambda t: (-t[1], t[0]))

    def objectives_of(self, c: Candidate) -> list[str]:
        return [f"{o} #{self.best[o].index(c) + 1}" for o in OBJECTIVES if c in self.best[o]]

    def finalists(self) -> list[Candidate]:
        """Every design shown, each once, in the order of the objectives."""
        out: list[Candidate] = []
        for o in OBJECTIVES:
            out += [c for c in self.best[o] if c not in out]
        return out


def run_size(request: SizingRequest, path: Path, run: RunConfig, catalog: Catalog) -> SizeResult:
    """The whole search: every point judged, then the `top` best of each objective validated in full."""
    search = Search(request, path, run, catalog)
    candidates = [search.evaluate(p) for p in space(request, catalog)]
    best: dict[str, list[Candidate]] = {}
    for objective in OBJECTIVES:
        chosen: list[Candidate] = []
        for c in rank(candidates, objective, search.kind):
            if c.rejected is None:
                c.rejected = search.validate(c)
            if c.rejected is None:
                chosen.append(c)
            if len(chosen) == request.top:
                break
        best[objective] = chosen
    for c in {id(c): c for cs in best.values() for c in cs}.values():
        _final_figures(c, request)
    return SizeResult(request, display_name(path), search.kind, candidates, best)


def _final_figures(c: Candidate, request: SizingRequest) -> None:
    """The figures of a reported design, from its full analysis (what `estimate` and `bom` would print)."""
    assert c.analysis is not None and c.analysis.derived is not None
    derived = c.analysis.derived
    output = request.inference.output_tokens if request.inference else 0
    figures: dict[str, Any] = {k: c.figures[k] for k in ("gpus", "servers", "replicas") if k in c.figures}
    figures.update(estimate_figures(derived.estimate, output))
    figures.update(cost_figures(derived.bom, figures))
    c.figures = figures


def design_text(result: SizeResult, c: Candidate, objective: str) -> str:
    """The design file of one finalist, named for the request and the objective it is written for."""
    design = {**c.design, "metadata": {**c.design["metadata"], "name": design_name(result.request, objective)}}
    f = c.figures
    head = [f"# Sized by `clusterplan size {result.file}`: best for {', '.join(result.objectives_of(c))}.",
            f"# {c.point.label}: {f['gpus']:,} GPUs in {f['servers']:,} servers, {c.per_rack} per rack"
            + (f", {c.replicas} replicas" if c.replicas else "") + ".",
            "# Re-run `clusterplan size` to change it; `clusterplan validate` checks it like any design."]
    return "\n".join(head) + "\n" + design_yaml(design)


def design_name(request: SizingRequest, objective: str) -> str:
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', request.metadata.name).strip('-.') or 'sized'}-{objective}"


def result_dict(result: SizeResult, written: dict[str, str] | None = None) -> dict[str, Any]:
    """The answer as plain data: `size --format json`, and what the text table is drawn from."""
    written = written or {}
    designs = []
    for c in result.finalists():
        p = c.point
        findings = [f for f in (c.analysis.findings if c.analysis else []) if not f.waived]
        designs.append({
            "label": p.label, "server": p.server, "fabric": p.fabric or None, "per_rack": c.per_rack,
            "parallelism": {"tp": p.tp, "pp": p.pp, "cp": p.cp, "ep": p.ep, "dp": p.dp},
            "best_for": result.objectives_of(c),
            "files": [written[o] for o in OBJECTIVES if o in written and result.best[o][0] is c],
            "warnings": sum(f.severity == "warning" for f in findings), **c.figures})
    rejected = [{"reason": code, "title": _title(code), "points": n, "stage": ex.rejected.stage if ex.rejected else "",
                 "example": ex.point.label, "message": ex.rejected.message if ex.rejected else ""}
                for code, n, ex in result.rejections()]
    survivors = sum(c.rejected is None for c in result.candidates)
    return {"version": 1, "request": result.file, "name": result.request.metadata.name, "kind": result.kind,
            "space": {"points": len(result.candidates), "feasible": survivors,
                      "rejected": len(result.candidates) - survivors},
            "best": {o: [c.point.label for c in cs] for o, cs in result.best.items()},
            "designs": designs, "rejected": rejected}



def _title(code: str) -> str:
    """The slug of the rule(s) a rejection names; empty for the request's own limits (the message says it)."""
    from validator.base.findings import READ_CODES
    from validator.check.registry import rule_by_id

    rules = [rule_by_id(c) for c in code.split()]
    if rules and all(r is not None for r in rules):
        return ", ".join(r.slug for r in rules if r is not None)
    if code in READ_CODES:
        return READ_CODES[code][0]
    return ""
