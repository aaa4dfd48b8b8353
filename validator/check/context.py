"""What a rule sees: the resolved design, its topology, the derived facts and the thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from validator.base.findings import Finding
from validator.derive import Derived
from validator.derive.estimate import Estimate, TrainingReport
from validator.expand.sizing import Problem
from validator.expand.topology import Topology
from validator.read.inference import Inference
from validator.read.model import Design, Training, Waiver
from validator.resolve.resolved import Resolved


@dataclass
class Context:
    topology: Topology
    derived: Derived
    overrides: dict[str, float] = field(default_factory=dict)
    # what the waiver rule (WVR001) works on, set by the engine after the other rules have run
    findings: list[Finding] = field(default_factory=list)
    repo_waivers: list[Waiver] = field(default_factory=list)
    today: date | None = None

    @property
    def resolved(self) -> Resolved:
        return self.topology.resolved

    @property
    def design(self) -> Design:
        return self.topology.resolved.design

    @property
    def training(self) -> Training:
        return self.resolved.training

    @property
    def inference(self) -> Inference:
        return self.resolved.inference

    def threshold(self, name: str) -> float:
        if name in self.overrides:
            return float(self.overrides[name])
        return self.resolved.threshold(name)

    def problems(self, rule: str) -> list[Problem]:
        """The sizing problems the expand stage found for one rule."""
        return [p for p in self.topology.problems if p.rule == rule]

    @property
    def estimate(self) -> Estimate:
        return self.derived.estimate

    @property
    def training_report(self) -> TrainingReport:
        """The training estimate of a training design (step, memory, goodput)."""
        report = self.derived.estimate.training
        assert report is not None, "a training design always has a training estimate"
        return report
