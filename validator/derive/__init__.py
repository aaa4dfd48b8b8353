"""Stage 4 (derive): facts computed from the expanded topology, once, lazily, typed.

    links      validator.derive.links       every cable with both ends and ports (and a summary pass)
    layout     validator.derive.placement   halls, rows, rack positions and cable lengths
    cabling    validator.derive.cabling     media per link and the cable and optics tally
    estimate   validator.derive.estimate    training or inference performance
    bom        validator.derive.bom         the structured bill of materials, power and cost

`Derived` holds them for one design; the rules (check) and every output (emit) read them from here,
so a figure is computed once and every consumer sees the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from validator.derive.links import LinkSummary, summarize
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom
    from validator.derive.cabling import Plan
    from validator.derive.estimate import Estimate
    from validator.derive.placement import Layout


@dataclass
class Derived:
    topology: Topology

    @cached_property
    def summaries(self) -> dict[str, LinkSummary]:
        return {name: summarize(self.topology, name) for name in self.topology.fabrics}

    @cached_property
    def layout(self) -> Layout:
        from validator.derive.placement import Layout

        return Layout(self.topology)

    @cached_property
    def cabling(self) -> Plan:
        from validator.derive.cabling import Plan

        return Plan(self.topology, self.layout)

    @cached_property
    def estimate(self) -> Estimate:
        from validator.derive.estimate import estimate

        return estimate(self.topology)

    @cached_property
    def bom(self) -> Bom:
        from validator.derive.bom import build_bom

        return build_bom(self.topology, self.cabling)
