"""Resolve every catalog reference of a design and fill in documented defaults.

The result holds catalog entries, not ids, so later stages never look anything up again.
Unresolved references are reported all at once, with line numbers and did-you-mean.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from validator.base.errors import DesignError, Diagnostic, Path, format_path
from validator.base.facts import fact
from validator.base.tables import thresholds, values
from validator.read.inference import Inference
from validator.read.loader import Loaded
from validator.read.model import Design, Fabric, Training
from validator.resolve.catalog import Catalog
from validator.resolve.catalog.entries import Facility, Gpu, LlmModel, Nic, Server, Switch
from validator.resolve.prices import Costing

FABRIC_ROLES = ("compute", "storage", "inband", "oob")
TIER_ROLES = ("leaf", "spine", "core")


@fact
class ResolvedTier:
    role: str
    switch: Switch
    path: Path


@fact
class ResolvedFabric:
    name: str
    spec: Fabric
    tiers: tuple[ResolvedTier, ...]
    nic: Nic | None          # the server adapter on this fabric (None: the server has no such link)
    links_per_server: int    # links from one server to this fabric, at the fabric's speed
    nic_speed_gbps: float    # the speed the server's links run at natively
    ports_per_nic_port: int = 1   # fabric-speed links one native NIC port gives (a 800G port as 2 x 400G)
    ports_per_cage: int = 1       # links sharing one server cage (twin-port OSFP)

    @property
    def speed_mismatch(self) -> bool:
        """The server's links cannot run at the fabric's speed (no breakout makes them match, and the NIC's
        manual names no such port speed)."""
        return bool(self.links_per_server) and self.nic_speed_gbps != self.spec.speed_gbps and \
            self.ports_per_nic_port == 1 and not (self.nic and self.spec.speed_gbps in self.nic.speeds_gbps)


@fact
class Resolved:
    design: Design
    loaded: Loaded
    catalog: Catalog
    server: Server
    gpu: Gpu
    rack: Facility
    model: LlmModel
    fabrics: dict[str, ResolvedFabric]
    defaults: dict[str, float]
    layout: dict[str, float]
    costing: Costing = field(default_factory=Costing)   # price books and the repository's TCO settings

    @property
    def file(self) -> str:
        return self.loaded.file

    @property
    def training(self) -> Training:
        assert self.design.training is not None, "a TrainingCluster always has a training section"
        return self.design.training

    @property
    def inference(self) -> Inference:
        assert self.design.inference is not None, "an InferenceFleet always has an inference section"
        return self.design.inference

    def threshold(self, name: str) -> float:
        """A rule threshold: the design's override (`thresholds:`), else validator/data/thresholds.yaml."""
        own = self.design.thresholds.get(name)
        return float(own) if own is not None else thresholds()[name].value

    @property
    def nvlink_domain_gpus(self) -> int:
        return self.design.compute.nvlink_domain_gpus or self.server.nvlink_domain_gpus

    @property
    def nvlink_domain_racks(self) -> int:
        system = self.server.rack_system
        return self.design.compute.nvlink_domain_racks or (system.racks_per_domain if system else 1)

    @property
    def gpus(self) -> int:
        return self.design.compute.count * self.server.gpus

    @property
    def pue(self) -> float:
        return float(self.design.site.pue or self.costing.tco.get("pue") or self.defaults["pue"])

    @property
    def electricity_usd_per_kwh(self) -> float:
        for v in (self.design.site.electricity_usd_per_kwh, self.costing.tco.get("electricity_usd_per_kwh")):
            if v is not None:
                return float(v)
        return self.defaults["electricity_usd_per_kwh"]

    def where(self, path: Path) -> tuple[int, int]:
        return self.loaded.where(path)


def _floats(table: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in table.items()}


def resolve(design: Design, loaded: Loaded, catalog: Catalog, costing: Costing | None = None) -> Resolved:
    problems: list[Diagnostic] = []

    def ref(kind: str, entry_id: str, path: Path) -> Any:
        entry = catalog.find(kind, entry_id)
        if entry is None:
            line, col = loaded.where(path)
            problems.append(Diagnostic("REF001", f"unknown {kind} '{entry_id}' at {format_path(path)}", loaded.file,
                                       line, col, path, catalog.suggest(kind, entry_id)))
        return entry

    server = ref("server", design.compute.server, ("compute", "server"))
    rack = ref("facility", design.site.rack.model, ("site", "rack", "model"))
    for key in ("rear_door", "cdu", "pdu"):
        value = getattr(design.site.rack, key)
        if value is not None:
            ref("facility", value, ("site", "rack", key))
    workload = design.training or design.inference
    model = ref("model", workload.model, (_workload_key(design), "model")) if workload else None
    gpu = catalog.find("gpu", server.gpu) if server else None
    if server and gpu is None:
        problems.append(Diagnostic("REF001", f"server '{server.id}' names unknown gpu '{server.gpu}'",
                                   loaded.file, *loaded.where(("compute", "server")), ("compute", "server"),
                                   "fix the server entry in your catalog file"))
    fabrics: dict[str, ResolvedFabric] = {}
    for name in FABRIC_ROLES:
        spec = getattr(design.fabrics, name)
        if spec is None:
            continue
        tiers = []
        for role in TIER_ROLES:
            tier = getattr(spec.tiers, role)
            if tier is None:
                continue
            path = ("fabrics", name, "tiers", role, "switch")
            switch = ref("switch", tier.switch, path)
            if switch is not None:
                tiers.append(ResolvedTier(role, switch, path[:-1]))
        links = server.links.get(name) if server else None
        nic = catalog.find("nic", links.nic) if links else None
        split = _breakout(nic, links.speed_gbps, spec.speed_gbps) if links else 1
        fabrics[name] = ResolvedFabric(name, spec, tuple(tiers), nic, links.count * split if links else 0,
                                       links.speed_gbps if links else 0.0, split,
                                       (links.ports_per_cage * split) if links else 1)
    if problems:
        raise DesignError(problems)
    assert gpu is not None and model is not None  # cross_checks guarantee a workload section
    return Resolved(design, loaded, catalog, server, gpu, rack, model, fabrics,
                    _floats(values("defaults.yaml", "defaults")), _layout(design), costing or Costing())


def _layout(design: Design) -> dict[str, float]:
    """Floor-plan figures: validator/data/layout.yaml, overridden by the design's `site.layout`."""
    figures = _floats(values("layout.yaml"))
    own = design.site.layout
    if own is not None:
        figures.update({k: float(v) for k, v in own.model_dump().items() if v is not None})
    return figures


def _breakout(nic: Nic | None, native_gbps: float, fabric_gbps: float) -> int:
    """Links one native NIC port gives at the fabric speed: 1, or the NIC's published breakout (a
    ConnectX-8 800G port as 2 x 400GbE); a speed the NIC cannot run is left to the link-speed rule."""
    if nic is None or native_gbps == fabric_gbps:
        return 1
    return nic.breakout.get(int(fabric_gbps), 1)


def _workload_key(design: Design) -> str:
    return "training" if design.training else "inference"
