"""The search space of `clusterplan size` and the design each of its points is (docs/planning.md).

A point is a server, a compute-fabric option and a parallel layout:

    training    TP x PP x CP x EP, and DP over the divisors of global_batch / micro_batch; the cluster is
                exactly TP x PP x CP x DP GPUs, in whole servers
    inference   one replica of TP x PP GPUs (EP over the TP group for MoE) that packs whole servers (or whole
                replicas per server); the replica count is what the estimator says meets the SLOs

Degrees default to validator/data/planning.yaml and the NVLink domain; `search:` in the request narrows or
widens them. Every point becomes a design dict in the design format; nothing here judges a point: the rules
and the estimator do (validator/workflows/size.py).
"""

from __future__ import annotations

import itertools
from typing import Any

import yaml
from pydantic import BaseModel

from validator.base.errors import ToolError
from validator.base.facts import fact
from validator.base.tables import planning
from validator.read.model import API_VERSION
from validator.read.sizing import SizingRequest
from validator.resolve.catalog import Catalog
from validator.resolve.catalog.entries import LlmModel, Server


@fact(order=True)
class Point:
    """One candidate: where it runs and how the work is split. `dp` is training's data-parallel degree."""

    server: str
    fabric: str          # option name; "" for no compute fabric
    tp: int
    pp: int
    cp: int = 1
    ep: int = 1
    dp: int = 1

    @property
    def replica_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def layout(self) -> str:
        extra = "".join(f" {k.upper()} {v}" for k, v in (("cp", self.cp), ("ep", self.ep)) if v > 1)
        return f"TP {self.tp} x PP {self.pp}{extra}" + (f" x DP {self.dp}" if self.dp > 1 else "")

    @property
    def label(self) -> str:
        return f"{self.server} / {self.fabric or 'no compute fabric'} / {self.layout}"


def _plan(name: str) -> list[int]:
    return list(getattr(planning(), name))


def _powers(limit: int) -> list[int]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def servers_of(request: SizingRequest, catalog: Catalog) -> list[Server]:
    out: list[Server] = []
    for sid in request.constraints.servers:
        entry = catalog.find("server", sid)
        if entry is None:
            raise ToolError(f"constraints.servers: unknown server '{sid}'; {catalog.suggest('server', sid)}")
        out.append(entry)
    return out


def model_of(request: SizingRequest, catalog: Catalog) -> LlmModel:
    work = request.training or request.inference
    assert work is not None
    entry = catalog.find("model", work.model)
    if entry is None:
        raise ToolError(f"model '{work.model}' is not in the catalog; {catalog.suggest('model', work.model)}")
    found: LlmModel = entry
    return found


def _tps(request: SizingRequest, server: Server) -> list[int]:
    cap = min(server.nvlink_domain_gpus, planning().max_tp)
    return list(request.search.tp or _powers(cap))


def _eps(request: SizingRequest, model: LlmModel, tp: int, training: bool) -> list[int]:
    if request.search.ep:
        return list(request.search.ep)
    if model.moe is None:
        return [1]
    return _powers(model.moe.experts) if training else sorted({1, tp})


def training_points(request: SizingRequest, catalog: Catalog) -> list[Point]:
    t = request.training
    assert t is not None
    model = model_of(request, catalog)
    dps = [d for d in _divisors(t.global_batch) if t.global_batch % (d * t.micro_batch) == 0]
    pps, cps = list(request.search.pp or _plan("training_pp")), list(request.search.cp or [1])
    out: list[Point] = []
    for server in servers_of(request, catalog):
        for fabric, tp, pp, cp in itertools.product(request.constraints.fabrics, _tps(request, server), pps, cps):
            for ep, dp in itertools.product(_eps(request, model, tp, True), dps):
                if (tp * pp * cp * dp) % server.gpus == 0:
                    out.append(Point(server.id, fabric, tp, pp, cp, ep, dp))
    return out


def inference_points(request: SizingRequest, catalog: Catalog) -> list[Point]:
    model = model_of(request, catalog)
    c = request.constraints
    fabrics = ([""] if c.without_fabric or not c.fabrics else []) + list(c.fabrics)
    pps = list(request.search.pp or _plan("inference_pp"))
    out: list[Point] = []
    for server in servers_of(request, catalog):
        for fabric, tp, pp in itertools.product(fabrics, _tps(request, server), pps):
            gpus = tp * pp
            packs = server.gpus % gpus == 0 if gpus <= server.gpus else gpus % server.gpus == 0
            if packs:
                out.extend(Point(server.id, fabric, tp, pp, ep=ep) for ep in _eps(request, model, tp, False))
    return out


def space(request: SizingRequest, catalog: Catalog) -> list[Point]:
    """Every point of the request's space, in a fixed order; refuses a space beyond the documented bound."""
    points = training_points(request, catalog) if request.training else inference_points(request, catalog)
    bound = planning().max_size_candidates
    if len(points) > bound:
        raise ToolError(f"the search space has {len(points):,} points; the limit is {bound:,} (validator/data/"
                        "planning.yaml max_size_candidates): name fewer servers or fabrics, or narrow `search:`")
    return points


# ---------------------------------------------------------------- the design of a point


def design_yaml(design: dict[str, Any]) -> str:
    """The text of a design dict, as `size` analyses it and writes it (innermost mappings on one line)."""
    return yaml.safe_dump(design, sort_keys=False, default_flow_style=None, allow_unicode=True, width=110)


def _dump(model: BaseModel) -> dict[str, Any]:
    out: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return out


def design_of(request: SizingRequest, point: Point, servers: int, per_rack: int, replicas: int = 1) -> dict[str, Any]:
    """The design (as a dict in the design format) of one point with `servers` servers, `per_rack` a rack."""
    c = request.constraints
    fabrics: dict[str, Any] = {"compute": _dump(c.fabrics[point.fabric])} if point.fabric else {}
    for name in ("storage", "inband", "oob"):
        net = getattr(c.networks, name)
        if net is not None:
            fabrics[name] = _dump(net)
    name = request.metadata.name
    design: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "TrainingCluster" if request.training else "InferenceFleet",
        "metadata": {"name": name, "description": f"sized by clusterplan size: {point.label}",
                     **({"owner": request.metadata.owner} if request.metadata.owner else {})},
        "site": _dump(c.site),
        "compute": {"server": point.server, "count": servers, "servers_per_rack": per_rack},
        "fabrics": fabrics,
    }
    if c.storage is not None:
        design["storage"] = _dump(c.storage)
    if c.costs is not None:
        design["costs"] = _dump(c.costs)
    if request.training is not None:
        design["training"] = _training(request, point)
    else:
        design["inference"] = _inference(request, point, replicas)
    return design


def _training(request: SizingRequest, p: Point) -> dict[str, Any]:
    t = request.training
    assert t is not None
    par: dict[str, int] = {"tp": p.tp, "pp": p.pp, "dp": p.dp}
    par.update({k: v for k, v in (("cp", p.cp), ("ep", p.ep)) if v > 1})
    return {"model": t.model, "parallelism": par, "sequence_length": t.sequence_length,
            "global_batch": t.global_batch, "micro_batch": t.micro_batch, "precision": str(t.precision),
            "zero_stage": t.zero_stage, "recompute": str(t.recompute), "tokens": t.tokens}


def _inference(request: SizingRequest, p: Point, replicas: int) -> dict[str, Any]:
    w = request.inference
    assert w is not None
    replica: dict[str, int] = {"gpus": p.replica_gpus, "tp": p.tp, "pp": p.pp}
    if p.ep > 1:
        replica["ep"] = p.ep
    out: dict[str, Any] = {"model": w.model, "replica": replica, "replicas": replicas,
                           "weight_precision": str(w.weight_precision), "kv_precision": str(w.kv_precision),
                           "prompt_tokens": w.prompt_tokens, "output_tokens": w.output_tokens,
                           "max_context_tokens": w.max_context_tokens, "targets": _dump(w.targets)}
    engine = _dump(w.engine)
    if engine:
        out["engine"] = engine
    return out
