"""The serving engine a replica runs: scheduler limits (design, else validator/data/serving.yaml by
engine), the step model's efficiency constants (validator/data/efficiency.yaml `serving`), and the
network a replica's GPUs talk over (NVLink inside the domain, the RDMA compute fabric beyond)."""

from __future__ import annotations

from functools import cache
from typing import Any

from validator.base.estimate_tables import efficiency
from validator.base.estimate_tables import serving as serving_defaults
from validator.base.facts import fact
from validator.read.inference import Engine
from validator.resolve.catalog.entries import Gpu


@fact
class EngineSettings:
    name: str
    max_num_seqs: int | None          # per attention rank; None: only the KV pool caps it
    max_batched_tokens: int           # token budget of one step, per attention rank
    chunked_prefill: bool
    admission: str                    # "reserve" (prompt + full output) or "average" (prompt + half)
    prefix_hit: float = 0.0
    spec_tokens: int = 0
    spec_acceptance: float = 0.0

    @property
    def tokens_per_step(self) -> float:
        """Output tokens one decode step yields per sequence: (1 - a^(g+1)) / (1 - a) (Leviathan et al.)."""
        if not self.spec_tokens:
            return 1.0
        a = self.spec_acceptance
        return (1 - a ** (self.spec_tokens + 1)) / (1 - a)


def engine_settings(engine: Engine, gpu: Gpu) -> EngineSettings:
    data = serving_defaults()
    table = data.engines[engine.name]
    large = gpu.memory_gb >= data.large_gpu_gib * 2 ** 30 / 1e9 and "a100" not in gpu.id

    def default(key: str) -> Any:
        return table[key].on(large)

    seqs = engine.max_num_seqs or default("max_num_seqs")
    spec = engine.speculative
    return EngineSettings(
        name=engine.name, max_num_seqs=int(seqs) if seqs else None,
        max_batched_tokens=int(engine.max_batched_tokens or default("max_batched_tokens")),
        chunked_prefill=bool(default("chunked_prefill") if engine.chunked_prefill is None else engine.chunked_prefill),
        admission=str(default("admission")), prefix_hit=engine.prefix_cache_hit_rate,
        spec_tokens=spec.tokens if spec else 0, spec_acceptance=spec.acceptance if spec else 0.0)


@fact
class ServingConstants:
    gemm: float
    expert_gemm: float
    attention: float
    memory: float
    step_overhead_s: float
    layer_overhead_s: float
    seq_overhead_s: float             # host work per sequence per step (scheduling, sampling, outputs)
    allreduce_latency_s: float
    ep_latency_s: float
    ep_exposed: float
    nvlink_efficiency: float
    fabric_efficiency: float
    family: str
    source: str
    calibrated: bool = True           # False: no set for this GPU's architecture; `family` is borrowed
    flashmla: tuple[float, float] | None = None     # FlashMLA's (peak share, bandwidth share) on this family


@cache
def serving_constants(gpu_id: str) -> ServingConstants:
    data = efficiency()
    s = data.serving
    family = s.family.get(gpu_id, s.default_family)
    g = s.gpus[family]
    comm = data.communication
    return ServingConstants(
        gemm=g["gemm"], expert_gemm=g["expert_gemm"], attention=g["attention"], memory=g["memory"],
        step_overhead_s=g["step_overhead_us"] / 1e6, layer_overhead_s=g["layer_overhead_us"] / 1e6,
        seq_overhead_s=g["seq_overhead_us"] / 1e6,
        allreduce_latency_s=s.allreduce_latency_us / 1e6, ep_latency_s=s.ep_latency_us / 1e6,
        ep_exposed=s.ep_exposed, nvlink_efficiency=comm["nvlink_efficiency"],
        fabric_efficiency=comm["fabric_efficiency"], family=family, source=s.source,
        calibrated=gpu_id in s.family, flashmla=s.flashmla.get(family))


@fact
class Network:
    """What one GPU of a replica talks over: NVLink inside its domain, RDMA beyond it."""

    nvlink_domain: int                # GPUs in one NVLink domain
    gpus_per_server: int
    nvlink_gbs: float                 # unidirectional NVLink bandwidth per GPU, GB/s
    rdma_gbps_per_gpu: float          # compute-fabric bandwidth per GPU after the tiers' taper, Gb/s (0: none)
    nic_gbps: float                   # one link's speed, Gb/s
    links_per_gpu: float              # compute-fabric links per GPU
    rdma: bool                        # the fabric carries RDMA (InfiniBand, RoCE, or a congestion control)
