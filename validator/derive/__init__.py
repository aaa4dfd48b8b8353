"""Facts computed from the expanded topology, once, lazily, typed.

    links      validator.derive.links       every cable with both ends and ports (and a summary pass)
    layout     validator.derive.placement   halls, rows, rack positions and cable lengths
    link_plan  validator.derive.tally       every link once as a pair of cages (validator.derive.cages) with
                                            its class and media, one module per cage: the one walk of the
                                            links that the tally, rack power, BOM and cabling rows share
    cabling    validator.derive.cabling     media per link and the cable and optics tally
    rack_power validator.derive.rack_power  power per rack (devices, their optics, cable ends) on the BOM's basis
    pools      validator.derive.estimate    an inference design's serving pools: shape, weights and KV per GPU
    kv_transfer validator.derive.estimate   one request's prefill-to-decode KV transfer (disaggregated serving)
    estimate   validator.derive.estimate    training or inference performance
    bom        validator.derive.bom         the structured bill of materials, power and cost (and the cost of
                                            growth, validator.derive.growth)

`Derived` holds them for one design; the rules (check) and every output (emit) read them from here,
so a figure is computed once and every consumer sees the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from validator.derive.pairs import LinkSummary
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom
    from validator.derive.cabling import Plan
    from validator.derive.estimate import Estimate, KvTransfer, Pool
    from validator.derive.placement import Layout
    from validator.derive.rack_power import RackPower
    from validator.derive.tally import CagePlan


@dataclass
class Derived:
    topology: Topology

    @cached_property
    def summaries(self) -> dict[str, LinkSummary]:
        """Link counts by bundle and the busiest switch per tier (from the media tally's pass over the links)."""
        return self.cabling.tally.summaries

    @cached_property
    def gbps_per_gpu(self) -> float:
        """Compute-fabric bandwidth per GPU, Gb/s: the one definition (derive/estimate/hardware.py)."""
        from validator.derive.estimate.hardware import gbps_per_gpu

        return gbps_per_gpu(self.topology.resolved)

    @cached_property
    def layout(self) -> Layout:
        from validator.derive.placement import Layout

        return Layout(self.topology)

    @cached_property
    def cabling(self) -> Plan:
        from validator.derive.cabling import Plan

        return Plan(self.topology, self.layout)

    @cached_property
    def link_plan(self) -> CagePlan:
        """Every link as a pair of cages with its media (the cabling plan's, built once)."""
        return self.cabling.cage_plan

    @cached_property
    def rack_power(self) -> RackPower:
        from validator.derive.rack_power import RackPower

        return RackPower(self.topology, self.cabling)

    @cached_property
    def pools(self) -> list[Pool]:
        """The serving pools of an inference design (one aggregated pool, or prefill then decode); [] for
        a training design."""
        from validator.derive.estimate import serving_pools

        return serving_pools(self.topology) if self.topology.resolved.design.inference else []

    @cached_property
    def kv_transfer(self) -> KvTransfer | None:
        """One request's KV transfer from prefill to decode; None when aggregated or nothing carries it."""
        from validator.derive.estimate import transfer_of

        return transfer_of(self.topology) if self.topology.resolved.design.inference else None

    @cached_property
    def estimate(self) -> Estimate:
        from validator.derive.estimate import estimate

        return estimate(self.topology, lambda: self.bom, self.pools or None)

    @cached_property
    def bom(self) -> Bom:
        from validator.derive.bom import build_bom
        from validator.derive.growth import add_growth_line

        return add_growth_line(build_bom(self.topology, self.cabling, self.rack_power), self.topology)
