"""Every rule, listed once, in ID order. Adding a rule means adding a line here."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from validator.check import facility, inference, network, training
from validator.check.base import Hit, Rule
from validator.check.context import Context


def _waiver_check(ctx: Context) -> Iterator[Hit]:
    """Waivers are checked by the engine after every rule has run: a waiver names a known rule, gives a
    reason, has not expired, names a waivable rule, and matches a finding.

    Source: clusterplan waiver policy (an accepted risk must say why, who accepted it, and until when).
    Fix: correct the waiver's rule ID, add a reason, renew its date, or remove it.
    Example:
        waivers: [{rule: FAC001, reason: '', owner: dc-ops}]   # a waiver without a reason
    """
    return iter(())


RULES: tuple[Rule, ...] = (
    Rule("FAC001", "rack-power", "Rack power within budget", "error", "all", facility.rack_power),
    Rule("FAC002", "cooling-density", "Cooling handles the rack density", "error", "all", facility.cooling_density),
    Rule("FAC003", "rack-space", "Rack units within the rack", "error", "all", facility.rack_space),
    Rule("INF001", "replica-fit", "Replica weights fit in HBM", "error", "inference", inference.replica_fit,
         waivable=False),
    Rule("INF002", "replica-in-nvlink", "Replica inside one NVLink domain", "error", "inference",
         inference.replica_in_nvlink),
    Rule("INF003", "kv-concurrency", "KV-cache-limited concurrency covers the target", "error", "inference",
         inference.kv_concurrency),
    Rule("INF004", "disaggregation-transport", "KV transfer over RDMA within the TTFT budget", "error",
         "inference", inference.disaggregation_transport),
    Rule("INF005", "over-built-fabric", "Inference fleet on a lossless InfiniBand fabric", "info", "inference",
         inference.over_built_fabric),
    Rule("INF006", "expert-parallel-domain", "Expert parallelism inside the NVLink domain", "warning",
         "inference", inference.expert_parallel_domain),
    Rule("INF007", "latency-targets", "Estimated TTFT and TPOT meet the targets", "error", "inference",
         inference.latency_targets),
    Rule("NET001", "switch-radix", "Ports used within switch radix", "error", "all", network.switch_radix,
         waivable=False),
    Rule("NET002", "link-speed-match", "Both ends of a link at the same speed", "error", "all",
         network.link_speed_match),
    Rule("NET003", "oob-reach", "Out-of-band network reaches every device", "warning", "all", network.oob_reach),
    Rule("NET004", "nvlink-in-rack", "NVLink domain inside one rack", "error", "all", training.nvlink_in_rack,
         waivable=False),
    Rule("NET005", "optics-reach", "Every link's media reaches its length", "error", "all", network.optics_reach,
         waivable=False),
    Rule("NET006", "even-striping", "Every switch pair carries the same number of links", "error", "all",
         network.even_striping),
    Rule("NET007", "declared-values", "Declared counts, ports and tapers are honoured", "error", "all",
         network.declared_values, waivable=False),
    Rule("NET008", "connected-fabric", "Every leaf reaches every other", "error", "all", network.connected_fabric),
    Rule("NET009", "backend-fabric", "A backend fabric where GPUs talk across servers", "error", "all",
         network.backend_fabric),
    Rule("TRN001", "lossless-fabric", "Lossless RoCE training fabric", "error", "training",
         training.lossless_fabric, waivable=False),
    Rule("TRN002", "non-blocking", "1:1 non-blocking training fabric", "error", "training", training.non_blocking),
    Rule("TRN003", "nvlink-tp-placement", "Tensor parallelism inside the NVLink domain", "error", "training",
         training.nvlink_placement),
    Rule("TRN004", "memory-fit", "Training memory fits in HBM", "error", "training", training.memory_fit,
         thresholds=("memory_reserve_gb",)),
    Rule("TRN005", "parallelism-consistency", "Parallelism degrees are consistent", "error", "training",
         training.parallelism_consistency, waivable=False),
    Rule("TRN006", "bandwidth-per-gpu", "Compute fabric bandwidth per GPU", "error", "training",
         training.bandwidth_per_gpu, thresholds=("training_bw_per_gpu_warn_gbps", "training_bw_per_gpu_error_gbps")),
    Rule("TRN007", "rail-alignment", "NIC i on the rail-i leaf", "error", "training", training.rail_alignment),
    Rule("TRN008", "checkpoint-storage", "Checkpoints write within the target time", "warning", "training",
         training.checkpoint_storage, thresholds=("checkpoint_write_target_s",)),
    Rule("TRN009", "spine-resilience", "Enough spines to survive one failure", "warning", "training",
         training.spine_resilience, thresholds=("min_spines",)),
    Rule("WVR001", "waiver-policy", "Waivers are valid and used", "error", "all", _waiver_check, waivable=False),
)


@cache
def _by_id() -> dict[str, Rule]:
    return {r.id: r for r in RULES}


def rule_by_id(rule_id: str) -> Rule | None:
    return _by_id().get(rule_id)
