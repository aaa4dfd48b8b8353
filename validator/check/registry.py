"""Every rule, listed once, in ID order. Adding a rule means adding its module under
validator/check/rules/ (the check, its docstring and its `RULE` metadata) and a line here."""

from __future__ import annotations

from functools import cache

from validator.check.base import Rule
from validator.check.rules import (
    backend_fabric,
    bandwidth_per_gpu,
    cage_fit,
    checkpoint_storage,
    connected_fabric,
    cooling_density,
    declared_values,
    disaggregation_transport,
    even_striping,
    exact_timers,
    expert_parallel_domain,
    expert_parallel_fabric,
    fleet_capacity,
    idle_gpus,
    kv_concurrency,
    latency_targets,
    link_speed_match,
    lossless_fabric,
    lossless_render,
    memory_fit,
    network_rack_cooling,
    non_blocking,
    nvlink_in_rack,
    nvlink_tp_placement,
    oob_reach,
    optics_reach,
    over_built_fabric,
    parallelism_consistency,
    rack_power,
    rack_space,
    rail_alignment,
    rail_only,
    replica_fit,
    replica_in_nvlink,
    spine_resilience,
    switch_radix,
    unknown_power,
    unknown_rack_units,
    unpriced_lines,
    waiver_policy,
)

WAIVER_RULE = "WVR001"   # runs last, over the other rules' findings

RULES: tuple[Rule, ...] = (
    rack_power.RULE,
    cooling_density.RULE,
    rack_space.RULE,
    unknown_rack_units.RULE,
    network_rack_cooling.RULE,
    replica_fit.RULE,
    replica_in_nvlink.RULE,
    kv_concurrency.RULE,
    disaggregation_transport.RULE,
    over_built_fabric.RULE,
    expert_parallel_domain.RULE,
    latency_targets.RULE,
    fleet_capacity.RULE,
    switch_radix.RULE,
    link_speed_match.RULE,
    oob_reach.RULE,
    nvlink_in_rack.RULE,
    optics_reach.RULE,
    even_striping.RULE,
    declared_values.RULE,
    connected_fabric.RULE,
    backend_fabric.RULE,
    rail_only.RULE,
    cage_fit.RULE,
    lossless_render.RULE,
    exact_timers.RULE,
    lossless_fabric.RULE,
    non_blocking.RULE,
    nvlink_tp_placement.RULE,
    memory_fit.RULE,
    parallelism_consistency.RULE,
    bandwidth_per_gpu.RULE,
    rail_alignment.RULE,
    checkpoint_storage.RULE,
    spine_resilience.RULE,
    unpriced_lines.RULE,
    unknown_power.RULE,
    expert_parallel_fabric.RULE,
    idle_gpus.RULE,
    waiver_policy.RULE,
)


@cache
def _by_id() -> dict[str, Rule]:
    return {r.id: r for r in RULES}


def rule_by_id(rule_id: str) -> Rule | None:
    return _by_id().get(rule_id)
