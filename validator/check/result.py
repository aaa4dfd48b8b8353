"""The verdict on one design: its findings, and (when it could be read) the expanded topology."""

from __future__ import annotations

from dataclasses import dataclass, field

from validator.base.findings import Finding
from validator.derive import Derived
from validator.expand.topology import Topology
from validator.resolve.resolved import Resolved


@dataclass
class Analysis:
    file: str
    findings: list[Finding] = field(default_factory=list)
    topology: Topology | None = None
    derived: Derived | None = None

    @property
    def facts(self) -> Derived:
        """The derived facts of a design that could be read and expanded (callers check `topology` first)."""
        assert self.derived is not None, "an analysis without a topology has no derived facts"
        return self.derived

    @property
    def resolved(self) -> Resolved | None:
        return self.topology.resolved if self.topology else None
