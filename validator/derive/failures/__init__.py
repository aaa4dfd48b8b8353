"""Failure domains (`clusterplan failures`): for each class of component the design has, what the failure
of one member costs, the worst member of the class, the spares to stock, and the single points of failure.

    graph.py     who is cabled to whom, one pass over each fabric's link plan
    impact.py    what a set of failed parts takes from one fabric
    classes.py   the component classes and the failure of each member (topology, rack plan)
    workload.py  the training job or the inference replicas a failure stops or slows
    spares.py    spares per class (validator/data/spares.yaml)
    spof.py      single points of failure, with the design key to change
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from validator.base.facts import fact
from validator.base.tables import value
from validator.derive import Derived
from validator.derive.failures.classes import (
    ComponentClass,
    Member,
    cooling_classes,
    link_classes,
    rack_classes,
    sample,
    server_classes,
    storage_classes,
    switch_classes,
)
from validator.derive.failures.graph import FabricGraph, fabric_graph
from validator.derive.failures.impact import FabricImpact, fabric_impact
from validator.derive.failures.spares import Spares, link_spares, minimum_spares, server_spares, switch_spares
from validator.derive.failures.workload import (
    InferenceImpact,
    TrainingImpact,
    inference_impact,
    inference_pools,
    training_impact,
)
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.failures.spof import Spof

FAILURES_VERSION = 1
_STATUS_RANK = {"unaffected": 0, "degraded": 1, "unknown": 1, "interrupted": 2, "blocked": 3}


@fact
class TierLoss:
    fabric: str
    bundle: str                 # endpoint-leaf, leaf-spine, spine-core
    links_lost: int
    links: int
    gbps_lost: float
    gbps: float


@dataclass
class ClassResult:
    name: str
    kind: str
    fabric: str | None
    count: int
    member: str                             # the member whose failure costs most
    sampled: int                            # members evaluated (count when every one was)
    path: tuple[str | int, ...]
    gpus_down: int | None = 0
    gpus_cut_off: int | None = 0            # live GPUs cut off from the workload's fabric
    gpus_without_nic: int | None = 0        # live, reachable GPUs whose own NIC lost every link
    gpus_at_risk: int | None = None         # PDU: GPUs that stop unless their other feed carries them
    bandwidth: list[TierLoss] = field(default_factory=list)
    servers_cut_off: dict[str, int] = field(default_factory=dict)
    servers_degraded: dict[str, int] = field(default_factory=dict)
    endpoints_cut_off: dict[str, dict[str, int]] = field(default_factory=dict)
    path_share: float | None = 1.0          # least share of bandwidth a reachable server keeps, workload fabric
    storage_nodes_down: int = 0
    training: TrainingImpact | None = None
    inference: InferenceImpact | None = None
    spares: Spares = field(default_factory=lambda: Spares(None, ""))
    note: str = ""

    @property
    def gpus_unreachable(self) -> int | None:
        if self.gpus_down is None or self.gpus_cut_off is None:
            return None
        return self.gpus_down + self.gpus_cut_off


@dataclass
class FailureAnalysis:
    name: str
    file: str
    kind: str
    gpus: int
    servers: int
    workload_fabric: str | None
    classes: list[ClassResult]
    findings: list[Spof] = field(default_factory=list)      # set by analyze_failures


def workload_fabric(topology: Topology) -> str | None:
    """The fabric the workload's GPUs talk over: compute, else the in-band network."""
    return next((f for f in ("compute", "inband") if f in topology.fabrics), None)


class _Evaluator:
    def __init__(self, topology: Topology, derived: Derived) -> None:
        self.topology = topology
        self.graphs: dict[str, FabricGraph] = {n: fabric_graph(topology, n) for n in topology.fabrics
                                               if topology.fabrics[n].buildable}
        self.gps = topology.resolved.server.gpus
        self.main = workload_fabric(topology)
        self.training = topology.resolved.design.training is not None
        est = None if self.training else derived.estimate.inference
        self.pools = [] if self.training else inference_pools(topology, est)

    def evaluate(self, cls: ComponentClass, member: Member) -> ClassResult:
        f = member.failure
        impacts = {n: fabric_impact(g, f) for n, g in self.graphs.items()}
        down = len(f.servers)
        main = impacts.get(self.main) if self.main else None
        r = ClassResult(cls.name, cls.kind, cls.fabric, cls.count, member.name, 0, cls.path)
        r.gpus_down = down * self.gps
        r.gpus_cut_off = len(main.cut_off) * self.gps if main else 0
        r.gpus_without_nic = self._without_nic(main)
        r.path_share = main.path_share if main else 1.0
        for n, i in impacts.items():
            g = self.graphs[n]
            for bundle, lost in sorted(i.links_lost.items()):
                if lost:
                    r.bandwidth.append(TierLoss(n, bundle, lost, g.links[bundle], lost * g.speed[bundle],
                                                g.capacity_gbps(bundle)))
            if i.cut_off:
                r.servers_cut_off[n] = len(i.cut_off)
            if i.degraded:
                r.servers_degraded[n] = len(i.degraded)
            if i.endpoints_cut_off:
                r.endpoints_cut_off[n] = dict(sorted(i.endpoints_cut_off.items()))
        r.storage_nodes_down = sum(1 for role, _ in f.endpoints if role == "storage")
        if self.training:
            r.training = training_impact(self.topology, f, impacts)
        else:
            r.inference = inference_impact(self.topology, f, impacts, self.pools)
        return r

    def _without_nic(self, main: FabricImpact | None) -> int:
        g = self.graphs.get(self.main or "")
        if main is None or g is None or not g.links_per_server:
            return 0
        nics = max(1, g.links_per_server // max(1, g.per_nic))
        return math.ceil(main.nics_dead * self.gps / nics)


def _rank(r: ClassResult) -> tuple[float, ...]:
    status = r.training.status if r.training else "unaffected"
    lost = r.inference.replicas_lost if r.inference else 0
    return (r.gpus_unreachable or 0, r.gpus_without_nic or 0, _STATUS_RANK[status], lost,
            sum(r.servers_cut_off.values()), sum(sum(v.values()) for v in r.endpoints_cut_off.values()),
            sum(t.links_lost for t in r.bandwidth), -(r.path_share or 0.0))


def _worst(ev: _Evaluator, cls: ComponentClass) -> ClassResult | None:
    best: ClassResult | None = None
    n = 0
    for member in cls.members():
        n += 1
        r = ev.evaluate(cls, member)
        if best is None or _rank(r) > _rank(best):
            best = r
    if best is not None:
        best.sampled = n
    return best


def _classes(topology: Topology, derived: Derived, graphs: dict[str, FabricGraph]) -> Iterator[ComponentClass]:
    from validator.derive.bom import racks_per_cdu

    yield from switch_classes(topology, graphs)
    yield from link_classes(topology, graphs)
    yield from server_classes(topology)
    yield from rack_classes(topology, derived.layout)
    site = topology.resolved.design.site.rack
    per = racks_per_cdu(topology, derived.bom.power["gpu_rack_kw"]) if site.cooling == "liquid" and site.cdu else None
    yield from cooling_classes(topology, per)
    yield from storage_classes(topology)


def _spares(topology: Topology, r: ClassResult) -> Spares:
    if r.kind == "link":
        return link_spares()
    if r.kind in ("switch", "oob-switch") and r.fabric is not None:
        fab = topology.fabrics[r.fabric]
        return switch_spares(r.count, fab.switches, topology.gpus)
    if r.kind == "server":
        return server_spares(topology.servers, topology.resolved.server.gpus)
    if r.kind in ("nvlink-domain", "gpu-rack", "network-rack", "storage-rack"):
        return Spares(0, "not stocked whole: spared by its parts (servers, switches, links)")
    return minimum_spares({"cdu": "CDUs", "rear-door": "rear-door heat exchangers",
                           "storage-node": "storage nodes", "pdu": "rack PDUs"}.get(r.kind, r.kind))


def _pdu(topology: Topology, derived: Derived) -> ClassResult | None:
    """A rack PDU: the rack keeps its other feed (validator/data/defaults.yaml pdu_feeds); whether its servers
    ride through on the power supplies of that feed is not in the catalog, so the loss is unknown and the
    GPUs on the PDU are at risk."""
    from validator.derive.bom import pdus_per_feed

    items = [i for i in derived.bom.items if i.category == "pdu"]
    if not items:
        return None
    pdu = topology.resolved.catalog.facility(items[0].part)
    feeds = int(value("defaults.yaml", "pdu_feeds", "bom"))
    per_feed = pdus_per_feed(derived.bom.power["gpu_rack_kw"], pdu.capacity_kw or 1.0)
    rack_gpus = topology.resolved.design.compute.servers_per_rack * topology.resolved.server.gpus
    r = ClassResult("PDU", "pdu", None, items[0].qty - items[0].spares, f"{pdu.id} (GPU rack, feed A)", 1,
                    ("site", "rack", "pdu"), gpus_down=None, gpus_cut_off=None, gpus_without_nic=None,
                    gpus_at_risk=min(topology.gpus, math.ceil(rack_gpus / per_feed)), path_share=None)
    r.note = (f"each rack has {feeds} feeds with {per_feed} PDU(s) each; the rack keeps its other feed, and its "
              "servers ride through only if the power supplies on that feed carry their load (not in the catalog)")
    return r


def analyze_failures(topology: Topology, derived: Derived | None = None) -> FailureAnalysis:
    from validator.derive.failures.spof import single_points

    derived = derived or Derived(topology)
    ev = _Evaluator(topology, derived)
    results: list[ClassResult] = []
    for cls in _classes(topology, derived, ev.graphs):
        r = _worst(ev, cls)
        if r is not None:
            results.append(r)
    pdu = _pdu(topology, derived)
    if pdu is not None:
        results.append(pdu)
    for r in results:
        r.spares = _spares(topology, r)
    d = topology.resolved.design
    out = FailureAnalysis(d.metadata.name, topology.resolved.file, "training" if d.training else "inference",
                          topology.gpus, topology.servers, ev.main, results)
    out.findings = list(single_points(topology, ev.graphs, results))
    return out


__all__ = ["FAILURES_VERSION", "ClassResult", "FailureAnalysis", "TierLoss", "analyze_failures", "sample",
           "workload_fabric"]
