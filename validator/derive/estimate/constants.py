"""The estimator's efficiency constants, from validator/data/efficiency.yaml.

Training: one fitted set per GPU type and precision (`training.sets`), each constant inside the
physically plausible range `training.bounds` (the fit cannot leave it and a test checks it). A GPU or
precision without published runs borrows a lender's set (`training.lenders`) and says so: the estimate
is then marked uncalibrated and carries a wider uncertainty. Inference: one set per GPU and precision
(`inference`), GPUs without their own use `default`.
"""

from __future__ import annotations

from functools import cache

from validator.base.estimate_tables import TrainingTable, efficiency
from validator.base.facts import fact

# the fitted training constants: per GPU and precision (how fast its kernels run), and shared by every
# set (how far the frameworks overlap communication, and the scale effects)
FITTED = ("gemm_max", "gemm_half_gflop", "attention_efficiency", "elementwise_factor")
SHARED = ("tp_exposed", "tp_overlap_exposed", "pp_exposed", "ep_exposed", "comm_contention", "layer_overhead_us",
          "tier_efficiency", "straggler_cv")


@fact
class TrainingConstants:
    gemm_max: float               # share of dense peak the largest GEMMs reach
    gemm_half_gflop: float        # GFLOPs of one layer's matmuls (one GPU, one micro-batch) at half of gemm_max
    attention_efficiency: float   # share of 16-bit peak a fused attention kernel reaches, forward and backward
    elementwise_factor: float     # passes over the Korthikanti activation bytes at HBM speed (norms, activations)
    tp_exposed: float             # share of TP collective time on the critical path
    tp_overlap_exposed: float     # the same with TP communication overlap declared
    pp_exposed: float             # share of pipeline send/receive time on the critical path
    ep_exposed: float             # share of expert all-to-all time on the critical path
    comm_contention: float        # compute slowdown per second of overlapped communication (shared SMs, HBM)
    layer_overhead_us: float      # fixed cost per layer per micro-batch per pass (launches, synchronisation)
    tier_efficiency: float        # bandwidth kept per extra switch tier climbed (ECMP collisions, congestion)
    straggler_cv: float           # per-node step-time jitter; the step waits for the slowest node
    nvlink_efficiency: float
    fabric_efficiency: float
    nvlink_latency_s: float
    fabric_latency_s: float
    ring_base_latency_s: float    # NCCL ring all-gather / reduce-scatter: fixed latency
    ring_nvlink_step_s: float     # ... per intra-node step
    ring_net_step_s: float        # ... per inter-node step
    dp_bucket_params: tuple[float, float]   # Megatron DDP bucket: max(min, per_rank x ranks) parameters
    key: str                      # the set used, "gpu/precision"
    calibrated: bool              # False: borrowed from `key`, this GPU/precision has no published run
    uncertainty: float            # stated relative uncertainty of a step time with this set

    @property
    def layer_overhead_s(self) -> float:
        return self.layer_overhead_us / 1e6


def _comm() -> dict[str, float]:
    return efficiency().communication


def training_table() -> TrainingTable:
    return efficiency().training


def bounds() -> dict[str, tuple[float, float]]:
    return training_table().bounds


def resolve_set(sets: dict[str, dict[str, float]], gpu: str, precision: str) -> tuple[str, bool]:
    """The set ("gpu/precision") a GPU and precision use, and whether it is their own."""
    t = training_table()
    prec = t.precision_alias.get(precision, precision)
    gpu_chain = [gpu]
    while gpu_chain[-1] in t.lenders and len(gpu_chain) < 5:
        gpu_chain.append(t.lenders[gpu_chain[-1]])
    prec_chain = [prec]
    while prec_chain[-1] in t.precision_lenders and len(prec_chain) < 5:
        prec_chain.append(t.precision_lenders[prec_chain[-1]])
    for p in prec_chain:
        for g in gpu_chain:
            if f"{g}/{p}" in sets:
                return f"{g}/{p}", g == gpu and p == prec
    return "prior", False


def make_training_constants(values: dict[str, float], key: str, calibrated: bool,
                            uncertainty: float) -> TrainingConstants:
    comm = _comm()
    return TrainingConstants(
        **{k: float(values[k]) for k in (*FITTED, *SHARED)},
        nvlink_efficiency=comm["nvlink_efficiency"], fabric_efficiency=comm["fabric_efficiency"],
        nvlink_latency_s=comm["nvlink_latency_us"] / 1e6, fabric_latency_s=comm["fabric_latency_us"] / 1e6,
        ring_base_latency_s=comm["ring_base_latency_us"] / 1e6, ring_nvlink_step_s=comm["ring_nvlink_step_us"] / 1e6,
        ring_net_step_s=comm["ring_net_step_us"] / 1e6,
        dp_bucket_params=(comm["dp_bucket_min_params"], comm["dp_bucket_params_per_rank"]),
        key=key, calibrated=calibrated, uncertainty=uncertainty)


@cache
def training_constants(gpu: str, precision: str) -> TrainingConstants:
    t = training_table()
    sets = t.sets
    key, own = resolve_set(sets, gpu, precision)
    values = {**t.prior, **t.shared, **(sets.get(key) or {})}
    base = float(sets.get(key, {}).get("uncertainty", t.uncalibrated_uncertainty))
    uncertainty = base if own else max(base * 2, t.uncalibrated_uncertainty)
    return make_training_constants(values, key, own, uncertainty)
