"""What a rule sees: the resolved design, its topology, thresholds, and (lazily) the estimate."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from validator.base.resources import load_data
from validator.expand.topology import Topology
from validator.resolve.resolved import Resolved


def default_thresholds() -> dict[str, dict[str, Any]]:
    return dict(load_data("thresholds.yaml")["thresholds"])


@dataclass
class Context:
    topology: Topology
    overrides: dict[str, float] = field(default_factory=dict)

    @property
    def resolved(self) -> Resolved:
        return self.topology.resolved

    @property
    def design(self) -> Any:
        return self.topology.resolved.design

    def threshold(self, name: str) -> float:
        if name in self.overrides:
            return float(self.overrides[name])
        return float(default_thresholds()[name]["value"])

    @cached_property
    def estimate(self) -> Any:
        from validator.derive.estimate import estimate

        return estimate(self.topology)
