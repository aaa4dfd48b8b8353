"""What the training estimator reads: the job (model, parallelism, sharding, recomputation, pipeline
layout) and the path its collectives take through the fabric. Built from a design's topology
(`training_report.training_setup`) or from a published run (tests/training_runs.py)."""

from __future__ import annotations

import math
from dataclasses import field

from validator.base.facts import fact
from validator.resolve.catalog.entries import Gpu, LlmModel


@fact
class FabricTier:
    """One switch tier as a collective sees it."""

    reach_gpus: int       # GPUs below one switch of this tier, through its subtree (per rail on rail-optimized)
    ratio: float          # downlink / uplink bandwidth of the tier's switches (0 at the top tier)


@fact
class FabricPath:
    """The scale-out fabric between NVLink domains: NIC bandwidth per GPU and the switch tiers a group of
    GPUs has to climb. A group that fits in one NVLink domain never touches it."""

    gbps_per_gpu: float
    tiers: tuple[FabricTier, ...] = ()
    nvlink_domain: int = 8
    rdma: bool = True

    def levels(self, span_gpus: int) -> int:
        """Switch tiers a group spanning `span_gpus` consecutive GPUs climbs (0: inside one NVLink domain)."""
        if span_gpus <= self.nvlink_domain:
            return 0
        for i, tier in enumerate(self.tiers):
            if span_gpus <= tier.reach_gpus:
                return i + 1
        return max(1, len(self.tiers))

    def taper(self, span_gpus: int) -> float:
        """Worst downlink/uplink ratio of the tiers the group's traffic climbs through (1 = non-blocking)."""
        levels = self.levels(span_gpus)
        ratios = [t.ratio for t in self.tiers[:max(0, levels - 1)] if t.ratio > 0]
        return max([1.0, *ratios])


def reference_fabric(gbps_per_gpu: float, nvlink_domain: int = 8, gpus_per_server: int = 8) -> FabricPath:
    """A non-blocking rail-optimized fat tree of 64-port switches (DGX SuperPOD shape): 32 servers per
    leaf rail, 32 leaves per spine pod, one core tier above. Used for published runs whose fabric is
    not described beyond its NIC speed."""
    servers_per_leaf = 32 if nvlink_domain <= gpus_per_server else 18
    leaf = servers_per_leaf * gpus_per_server
    return FabricPath(gbps_per_gpu, (FabricTier(leaf, 1.0), FabricTier(leaf * 32, 1.0), FabricTier(10**9, 0.0)),
                      nvlink_domain)


@fact
class Sharding:
    """How the data-parallel ranks share the training state.

    stage 0: plain DDP (gradient all-reduce); 1: distributed optimizer / ZeRO-1; 2: + gradients;
    3: + parameters (FSDP FULL_SHARD: parameters all-gathered in forward and again in backward, gradients
    reduce-scattered, every micro-batch). `group` shards within groups of that many data-parallel ranks
    and replicates across groups (HSDP); None shards across all of DP x CP."""

    stage: int = 1
    group: int | None = None
    grad_bytes: float = 2.0          # bytes per gradient element on the wire


@fact
class TrainingSetup:
    """Everything the estimator reads, from a design's topology or from a published run."""

    model: LlmModel
    gpu: Gpu
    tp: int
    pp: int
    dp: int
    cp: int = 1
    ep: int = 1
    vpp: int = 1
    seq: int = 2048
    global_batch: int = 1
    micro_batch: int = 1
    precision: str = "bf16"
    recompute: str = "selective"      # none | selective | full
    recompute_share: float = 1.0      # share of layers fully recomputed (recompute: full)
    sequence_parallel: bool = True
    tp_comm_overlap: bool = False     # TP collectives overlapped with the GEMMs (TE userbuffers, async TP)
    dp_comm_overlap: bool = True      # DP collectives overlapped with backward/forward (bucketed, prefetched)
    flash_attention: bool = True
    sharding: Sharding = field(default_factory=Sharding)
    fabric: FabricPath = field(default_factory=lambda: reference_fabric(400.0))
    pipeline_layers: tuple[int, ...] | None = None   # declared layers per pipeline stage (first to last)
    activation_offload: float = 0.0   # share of activation memory held in host memory
    tokens: float | None = None
    trainable_share: float = 1.0      # trained parameters over the model's (LoRA / frozen weights: < 1)
    mtp_layers: int = 0               # multi-token prediction modules on the last stage (DeepSeek-V3: 1)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    @property
    def microbatches(self) -> int:
        return max(1, self.global_batch // (self.dp * self.micro_batch))

    @property
    def tokens_per_microbatch(self) -> float:
        """Tokens of one micro-batch on one GPU's context-parallel shard."""
        return self.micro_batch * self.seq / self.cp

    @property
    def stage_layers(self) -> tuple[int, ...]:
        """Layers of each pipeline stage: the declared layout, else as even as possible with the
        shortfall on the first and last stages (which also hold the embedding and the LM head)."""
        if self.pipeline_layers:
            return self.pipeline_layers
        return default_stage_layers(self.model.layers, self.pp)



def default_stage_layers(layers: int, pp: int) -> tuple[int, ...]:
    """Megatron-LM's uneven split: every stage gets ceil(l/p) layers except the first and last, which
    give up the shortfall (--decoder-first/last-pipeline-num-layers), so the slowest stage holds
    ceil(l/p) layers."""
    per = math.ceil(layers / pp)
    stages = [per] * pp
    order = [i for pair in zip(range(pp), range(pp - 1, -1, -1), strict=True) for i in pair][:pp]
    short, k = per * pp - layers, 0
    while short > 0:
        i = order[k % pp]
        if stages[i] > 0:
            stages[i] -= 1
            short -= 1
        k += 1
    return tuple(stages)
