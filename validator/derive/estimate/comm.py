"""Collective times (docs/estimator.md, Training) and the model-parallel traffic of one layer.

A group of GPUs that fits in one NVLink domain talks over NVLink; a larger one over the scale-out
fabric at the NIC bandwidth per GPU, divided by the worst downlink/uplink taper of the switch tiers
its traffic climbs and by `tier_efficiency` per extra tier (hash collisions and congestion grow
with the tiers crossed), so collectives of large data-parallel groups cost more than small ones.
Megatron-LM's rank order (TP, CP, EP, DP, PP, innermost first) decides how far each group spans.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.derive.estimate.constants import TrainingConstants
from validator.derive.estimate.flops import dense_mlp_share
from validator.derive.estimate.memory import precision_bytes
from validator.derive.estimate.setup import TrainingSetup


@fact
class Link:
    bandwidth: float      # bytes/s per GPU, one direction
    latency: float        # seconds per collective step
    levels: int           # switch tiers climbed (0: NVLink)


def link(s: TrainingSetup, c: TrainingConstants, span_gpus: int, stride: int = 0) -> Link:
    """The link a group spanning `span_gpus` consecutive ranks uses. A collective whose members sit
    `stride` ranks apart has several members in each NVLink domain when stride < domain: NCCL's rings
    then leave the domain through all their NICs, so the group's bandwidth per GPU is that many NICs
    (NCCL bus bandwidth across DGX nodes is the node's NIC total, not one NIC's)."""
    fab = s.fabric
    levels = fab.levels(span_gpus)
    if levels == 0 and s.gpu.scaleup_bandwidth_gbs <= 0:
        levels = 1          # no NVLink: peers in a server talk through the NICs
    if levels == 0:
        return Link(s.gpu.scaleup_bandwidth_gbs / 2 * 1e9 * c.nvlink_efficiency, c.nvlink_latency_s, 0)
    local = max(1, min(fab.nvlink_domain // stride, span_gpus // stride)) if 0 < stride < fab.nvlink_domain else 1
    bw = fab.gbps_per_gpu / 8 * 1e9 * c.fabric_efficiency * c.tier_efficiency ** (levels - 1) / fab.taper(span_gpus)
    return Link(max(bw * local, 1.0), c.fabric_latency_s * levels, levels)


def latency_steps(n: int) -> float:
    """Latency-bound steps of an all-reduce over n ranks: a ring's 2(n-1) for small groups, a tree's
    2 log2(n) beyond (NCCL switches algorithms by size)."""
    return float(min(2 * (n - 1), 2 * math.ceil(math.log2(n)) + 6)) if n > 1 else 0.0


def ring_latency(s: TrainingSetup, c: TrainingConstants, n: int, stride: int) -> float:
    """NCCL's latency of one ring all-gather or reduce-scatter over n ranks `stride` ranks apart (its
    tuning model, Simple protocol): a base plus one step per rank, the steps between NVLink domains at
    the network's step latency, the others at NVLink's. Linear in n: a ring over 1,024 GPUs waits
    ~5 ms per collective however small its message."""
    if n <= 1:
        return 0.0
    domain = s.fabric.nvlink_domain if s.gpu.scaleup_bandwidth_gbs > 0 else 1
    per_domain = max(1, min(domain // stride, n)) if 0 < stride < domain else 1
    domains = math.ceil(n / per_domain)
    return c.ring_base_latency_s + (n - domains) * c.ring_nvlink_step_s + (domains - 1) * c.ring_net_step_s


def collective(n: int, size: float, ln: Link, kind: str = "allreduce") -> float:
    """Ring collective time: bandwidth term (n-1)/n per pass (2 passes for all-reduce) plus latency."""
    if n <= 1 or size <= 0:
        return 0.0
    passes = 2 if kind == "allreduce" else 1
    return passes * (n - 1) / n * size / ln.bandwidth + latency_steps(n) * ln.latency * passes / 2


def activation_bytes(s: TrainingSetup) -> float:
    return precision_bytes("bf16") if s.precision in ("fp8", "fp4", "int8", "int4") else precision_bytes(s.precision)


def tp_time(s: TrainingSetup, c: TrainingConstants) -> float:
    """2 all-reduces forward and 2 backward (+2 with full recomputation) of the layer's activations;
    with sequence parallelism each is a reduce-scatter + all-gather of the same bytes."""
    if s.tp <= 1:
        return 0.0
    size = s.tokens_per_microbatch * s.model.hidden * activation_bytes(s)
    n = 4 + (2 * s.recompute_share if s.recompute == "full" else 0)
    return n * collective(s.tp, size, link(s, c, s.tp))


def cp_time(s: TrainingSetup, c: TrainingConstants, attention: float) -> float:
    """Ring attention: each rank passes its K,V block around the ring, (cp-1) hops forward and twice that
    backward, hidden behind the attention of the block being computed where it can be."""
    if s.cp <= 1:
        return 0.0
    model = s.model
    kv_width = (model.mla.kv_lora_rank + model.mla.qk_rope_head_dim) if model.mla else \
        2 * model.kv_heads * model.dim_per_head
    block = s.tokens_per_microbatch * kv_width * activation_bytes(s) / s.tp
    ln = link(s, c, s.tp * s.cp)
    comm = 3 * (s.cp - 1) * (block / ln.bandwidth + ln.latency)
    return max(0.0, comm - 3 * attention)


def ep_time(s: TrainingSetup, c: TrainingConstants) -> float:
    """Dispatch and combine all-to-alls of an MoE layer, forward and backward (+ forward again with full
    recomputation), averaged over the layers. Peers inside the NVLink domain are reached over NVLink,
    the others over the fabric; the slower share sets the time."""
    model = s.model
    if model.moe is None or s.ep <= 1:
        return 0.0
    size = s.tokens_per_microbatch * model.moe.top_k * model.hidden * activation_bytes(s) / s.tp
    remote = size * (s.ep - 1) / s.ep
    span = s.tp * s.cp * s.ep
    if span <= s.fabric.nvlink_domain:
        one = remote / link(s, c, span).bandwidth + c.nvlink_latency_s
    else:
        local_peers = max(1, s.fabric.nvlink_domain // (s.tp * s.cp))
        off = (s.ep - local_peers) / s.ep
        nv = link(s, c, 1)
        fab = link(s, c, span)
        one = max(size * (local_peers - 1) / s.ep / nv.bandwidth, size * off / fab.bandwidth) + fab.latency
    passes = 4 + (2 * s.recompute_share if s.recompute == "full" else 0)
    return passes * one * (1 - dense_mlp_share(model))


def pp_time(s: TrainingSetup, c: TrainingConstants) -> float:
    """Stage-boundary sends of one step: each micro-batch's activation forward and its gradient backward,
    once per virtual stage; with sequence parallelism each TP rank sends its 1/TP slice."""
    if s.pp <= 1:
        return 0.0
    size = s.tokens_per_microbatch * s.model.hidden * activation_bytes(s) / (s.tp if s.sequence_parallel else 1)
    ln = link(s, c, 2 * s.tp * s.cp * s.dp)
    return 2 * s.microbatches * s.vpp * (size / ln.bandwidth + ln.latency)
