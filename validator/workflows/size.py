"""`clusterplan size`: the best designs for a workload, by an exhaustive search over a bounded space.

Every point of the space (validator/workflows/size_space.py) is judged cheapest check first, and the first
check it fails is why it was rejected:

    1 bound      more GPUs than constraints.max_gpus, or than planning.yaml default_max_gpus (no building)
    2 hardware   the design read -> resolve -> expand once per (server, fabric, server count), with the most
                 servers per rack that rack-power, cooling, rack-space and NVLink-in-rack allow (FAC001,
                 FAC002, FAC003, NET004), then link-speed (NET002) and TOP001 from the expand stage
    3 workload   the point's parallel layout on that hardware: training TRN003, TRN004, TRN005; inference
                 INF001, INF002, NET009
    4 estimate   training: the deadline; inference: the replicas that meet the SLOs (INF008 when none
                 does), the fleet built from them, then INF003, INF007, INF008 on it
    5 fabric     switch radix (NET001) on the link plan
    6 cost       capex within budget_usd, facility power within site_power_kw (BOM, once per hardware)
    7 validate   the best-ranked survivors of each objective run through the whole pipeline (every rule),
                 as `clusterplan validate` runs them on the written file; one with an error is rejected by it

Points that differ only in their parallel layout share the expanded hardware: the expand and derive stages
read no workload field (only the model's catalog entry, the same for every point), so the workload section
is swapped in (`with_workload`) rather than the design rebuilt. The designs `size` reports are rebuilt from
their text by the normal pipeline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from validator.base.errors import DesignError
from validator.base.facts import fact
from validator.base.tables import planning
from validator.check.context import Context
from validator.check.registry import rule_by_id
from validator.check.result import Analysis
from validator.derive import Derived
from validator.derive.bom import Bom
from validator.derive.estimate import Estimate, estimate
from validator.expand.topology import Topology
from validator.pipeline import analyze, load_topology
from validator.read.config import RunConfig
from validator.read.inference import Inference
from validator.read.model import Training
from validator.read.sizing import SizingRequest
from validator.resolve.catalog import Catalog
from validator.workflows.size_space import Point, design_of, design_yaml

RACK_RULES = ("FAC001", "FAC002", "FAC003", "NET004")
HARDWARE_RULES = ("NET002",)
WORKLOAD_RULES = {"training": ("TRN003", "TRN004", "TRN005"), "inference": ("INF001", "INF002", "NET009")}
SLO_RULES = ("INF003", "INF007", "INF008")
FABRIC_RULES = ("NET001",)


@fact
class Rejection:
    code: str        # a rule id, or the constraint: max_gpus, deadline, budget_usd, site_power_kw
    message: str
    stage: str


@dataclass(eq=False)
class Candidate:
    point: Point
    servers: int = 0
    replicas: int = 0
    per_rack: int = 0
    rejected: Rejection | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    design: dict[str, Any] = field(default_factory=dict)
    analysis: Analysis | None = None


@dataclass
class Hardware:
    """One (server, fabric, server count), expanded once."""

    topology: Topology | None = None
    derived: Derived | None = None
    per_rack: int = 0
    rejected: Rejection | None = None
    fabric_checked: bool = False


def with_workload(topology: Topology, design: dict[str, Any]) -> Topology:
    """The topology with the design's workload section in place of its own (expand reads no workload field)."""
    r = topology.resolved
    if "training" in design:
        update: dict[str, Any] = {"training": Training.model_validate(design["training"])}
    else:
        update = {"inference": Inference.model_validate(design["inference"])}
    return replace(topology, resolved=replace(r, design=r.design.model_copy(update=update)))


def first_error(topology: Topology, derived: Derived, ids: tuple[str, ...], run: RunConfig,
                stage: str) -> Rejection | None:
    """The first error-level finding of these rules (run's severities applied), as a rejection."""
    design = topology.resolved.design
    ctx = Context(topology, derived, dict(design.thresholds))
    overrides = {**run.severity, **design.severity}
    for rid in ids:
        rule = rule_by_id(rid)
        assert rule is not None, rid
        level = overrides.get(rid, rule.severity)
        if not rule.applies(design.kind) or level == "off":
            continue
        for hit in rule.check(ctx):
            severity = hit.severity if hit.severity and level == rule.severity else level
            if severity == "error":
                return Rejection(rid, hit.message, stage)
    return None


def estimate_figures(est: Estimate, output_tokens: int) -> dict[str, Any]:
    """What the ranking and the table read of an estimate. Inference `latency_ms` is the figure of merit of
    `fastest`: p99 TTFT + output_tokens x p99 TPOT at the target load (a bound, not itself a percentile)."""
    e = est.as_dict()      # the figures as `clusterplan estimate` prints them (four significant digits)
    if e["kind"] == "training":
        # with the checkpoint and restart losses (goodput) when the storage write bandwidth is known, else the
        # ideal time at the step rate, a lower bound, and the result says which
        real = e["time_to_train_days"]
        return {"days": real if real is not None else e["time_to_train_ideal_days"],
                "days_basis": "with goodput" if real is not None else "ideal (no storage write bandwidth: "
                "checkpoint and restart losses not counted)",
                "mfu": e["mfu"], "tokens_per_s": e["tokens_per_s"], "tokens_per_s_per_gpu": e["tokens_per_s_per_gpu"]}
    ttft, tpot = e["ttft_ms"], e["tpot_ms"]
    return {"replicas_needed": e["replicas_needed"], "ttft_ms": ttft, "tpot_ms": tpot,
            "latency_ms": None if ttft is None or tpot is None else ttft + output_tokens * tpot,
            "output_tokens_per_s_per_gpu": e["output_tokens_per_s_per_gpu"],
            "cost_per_million_tokens": e["cost_per_million_tokens"]}


def cost_figures(bom: Bom, figures: dict[str, Any]) -> dict[str, Any]:
    """Capex (None when a line is unpriced), power and cost of ownership: for training the run's (busy
    GPU-hours x the cost of a busy GPU-hour), for inference a year's (the BOM's TCO)."""
    capex = bom.totals["capex_usd"] if bom.totals["capex_complete"] else None
    per_hour = bom.tco["gpu_hour_usd"]
    if "days" in figures:
        tco = None if per_hour is None or figures["days"] is None else per_hour * figures["gpus"] * figures["days"] * 24
    else:
        tco = bom.tco["total_usd_per_year"]
    return {"capex_usd": capex, "facility_kw": bom.power["facility_kw"], "it_kw": bom.power["it_kw"],
            "gpu_hour_usd": per_hour, "tco_usd": tco, "racks": bom.power["gpu_racks"]}


class Search:
    """The search state of one request: the hardware already expanded, by (server, fabric, servers)."""

    def __init__(self, request: SizingRequest, path: Path, run: RunConfig, catalog: Catalog) -> None:
        self.request, self.path, self.run, self.catalog = request, path, run, catalog
        self.kind = "training" if request.training else "inference"
        self.hardware: dict[tuple[str, str, int], Hardware] = {}
        given = request.constraints.max_gpus
        self.max_gpus = given or planning().default_max_gpus
        self.bound_note = "" if given else " by default (set constraints.max_gpus)"

    # ------------------------------------------------------------ building

    def build(self, design: dict[str, Any]) -> Topology:
        return load_topology(self.path, f"{self.request.metadata.name}.yaml", self.run, text=design_yaml(design))

    def rack_options(self, server_id: str, servers: int) -> list[int]:
        """Servers per rack to try, densest first: a rack system's own count, else as many as the rack's
        units hold down to one (the rack rules decide)."""
        server = self.catalog.server(server_id)
        if server.rack_system is not None:
            return [server.rack_system.servers_per_rack]
        rack = self.catalog.find("facility", self.request.constraints.site.rack.model)
        units = rack.rack_units if rack is not None and rack.rack_units else server.rack_units
        return list(range(max(1, min(units // server.rack_units, servers)), 0, -1))

    def hardware_for(self, point: Point, servers: int, replicas: int = 1) -> Hardware:
        key = (point.server, point.fabric, servers)
        if key not in self.hardware:
            self.hardware[key] = self._expand(point, servers, replicas)
        return self.hardware[key]

    def _expand(self, point: Point, servers: int, replicas: int) -> Hardware:
        found = Hardware()
        for per_rack in self.rack_options(point.server, servers):
            try:
                topology = self.build(design_of(self.request, point, servers, per_rack, replicas))
            except DesignError as exc:
                d = exc.diagnostics[0]
                return Hardware(rejected=Rejection(d.code, d.message, "hardware"))
            derived = Derived(topology)
            miss = first_error(topology, derived, RACK_RULES, self.run, "hardware")
            found = Hardware(topology, derived, per_rack, miss)
            if miss is None:
                break
        if found.rejected is None and found.topology is not None and found.derived is not None:
            found.rejected = first_error(found.topology, found.derived, HARDWARE_RULES, self.run, "hardware")
        return found

    def fabric_check(self, hw: Hardware) -> Rejection | None:
        """Switch radix on the link plan (NET001), once per hardware: it needs the cabling tally."""
        if not hw.fabric_checked and hw.rejected is None:
            assert hw.topology is not None and hw.derived is not None
            hw.rejected = first_error(hw.topology, hw.derived, FABRIC_RULES, self.run, "fabric")
            hw.fabric_checked = True
        return hw.rejected

    # ------------------------------------------------------------ judging one point

    def evaluate(self, point: Point) -> Candidate:
        return self._training(point) if self.kind == "training" else self._inference(point)

    def _training(self, point: Point) -> Candidate:
        c = Candidate(point)
        server = self.catalog.server(point.server)
        gpus = point.tp * point.pp * point.cp * point.dp
        c.servers = gpus // server.gpus
        if gpus > self.max_gpus:
            c.rejected = Rejection("max_gpus", f"{gpus:,} GPUs > the {self.max_gpus:,} allowed{self.bound_note}",
                                   "bound")
            return c
        hw = self.hardware_for(point, c.servers)
        c.rejected, c.per_rack = hw.rejected, hw.per_rack
        if c.rejected is not None or hw.topology is None:
            return c
        c.design = design_of(self.request, point, c.servers, hw.per_rack)
        topology = with_workload(hw.topology, c.design)
        c.rejected = first_error(topology, Derived(topology), WORKLOAD_RULES["training"], self.run, "workload")
        if c.rejected is None:
            c.figures = {"gpus": gpus, "servers": c.servers, **estimate_figures(estimate(topology), 0)}
            deadline = self.request.training.deadline_days if self.request.training else None
            if deadline is not None and c.figures["days"] > deadline:
                c.rejected = Rejection("deadline", f"{c.figures['days']:.1f} days to train > the "
                                       f"{deadline:g}-day deadline", "estimate")
        if c.rejected is None:
            c.rejected = self.fabric_check(hw) or self._cost(c, hw)
        return c

    def _inference(self, point: Point) -> Candidate:
        c = Candidate(point)
        server = self.catalog.server(point.server)
        probe_servers = max(1, point.replica_gpus // server.gpus)
        probe = self.hardware_for(point, probe_servers)
        if probe.rejected is not None or probe.topology is None:
            c.rejected = probe.rejected
            return c
        design = design_of(self.request, point, probe_servers, probe.per_rack,
                           probe_servers * server.gpus // point.replica_gpus)
        topology = with_workload(probe.topology, design)
        c.rejected = first_error(topology, Derived(topology), WORKLOAD_RULES["inference"], self.run, "workload")
        if c.rejected is None:
            c.rejected = self._fleet(c, server.gpus, topology, probe)
        return c

    def _fleet(self, c: Candidate, per_server: int, probe: Topology, probe_hw: Hardware) -> Rejection | None:
        """Size the fleet from the probe's replicas needed, build it and check its SLOs and cost."""
        assert probe_hw.derived is not None
        bom = probe_hw.derived.bom
        needed = estimate(probe, lambda: bom).inference
        assert needed is not None
        if needed.replicas_needed is None:
            return Rejection("INF008", "no number of replicas meets the SLOs at the target load (one replica's "
                             "latency alone exceeds them)", "estimate")
        p = c.point
        c.servers = math.ceil(max(needed.replicas_needed, 1) * p.replica_gpus / per_server)
        c.replicas = c.servers * per_server // p.replica_gpus
        if c.servers * per_server > self.max_gpus:
            return Rejection("max_gpus", f"{c.servers * per_server:,} GPUs > the {self.max_gpus:,} allowed"
                             f"{self.bound_note}", "bound")
        hw = self.hardware_for(p, c.servers, c.replicas)
        c.per_rack = hw.per_rack
        if hw.rejected is not None or hw.topology is None:
            return hw.rejected
        c.design = design_of(self.request, p, c.servers, hw.per_rack, c.replicas)
        topology = with_workload(hw.topology, c.design)
        derived = Derived(topology)
        if hw.derived is not None:
            derived.bom = hw.derived.bom    # seed the cached BOM: the same hardware, already built
        miss = first_error(topology, derived, SLO_RULES, self.run, "estimate")
        assert self.request.inference is not None
        c.figures = {"gpus": c.servers * per_server, "servers": c.servers, "replicas": c.replicas,
                     **estimate_figures(derived.estimate, self.request.inference.output_tokens)}
        return miss or self.fabric_check(hw) or self._cost(c, hw)

    def _cost(self, c: Candidate, hw: Hardware) -> Rejection | None:
        """Capex, power and TCO of the hardware; the budget and site-power limits."""
        assert hw.derived is not None
        bom = hw.derived.bom
        c.figures.update(cost_figures(bom, c.figures))
        capex, facility = c.figures["capex_usd"], c.figures["facility_kw"]
        k = self.request.constraints
        if k.budget_usd is not None and (capex is None or capex > k.budget_usd):
            why = "capex unknown: unpriced " + ", ".join(bom.totals["unpriced_parts"]) if capex is None else \
                f"capex ${capex:,.0f} > the ${k.budget_usd:,.0f} budget"
            return Rejection("budget_usd", why, "cost")
        if k.site_power_kw is not None and (facility is None or facility > k.site_power_kw):
            why = "facility power unknown" if facility is None else \
                f"{facility:,.1f} kW facility power > the {k.site_power_kw:,.0f} kW the site delivers"
            return Rejection("site_power_kw", why, "cost")
        return None

    # ------------------------------------------------------------ the whole pipeline on a finalist

    def validate(self, c: Candidate) -> Rejection | None:
        """The candidate's design through every rule, from its text, as `clusterplan validate` would."""
        if c.analysis is None:
            c.analysis = analyze(self.path, f"{self.request.metadata.name}.yaml", self.run, text=design_yaml(c.design))
        errors = [f for f in c.analysis.findings if f.severity == "error" and not f.waived]
        if errors:
            codes = " ".join(sorted({f.rule for f in errors}))
            return Rejection(codes, errors[0].message, "validate")
        return None

