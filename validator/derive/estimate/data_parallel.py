"""Data-parallel traffic per step and the part of it the step waits for (docs/estimator.md, Training).

Per GPU, with Psi parameters in its model-parallel shard, P = 2 bytes per parameter gathered and
G bytes per gradient reduced, over a group of n ranks:

- stage 0 (DDP): all-reduce of the gradients, 2 (n-1)/n G Psi, once per step;
- stages 1-2 (distributed optimizer, ZeRO-1/2): reduce-scatter of the gradients (n-1)/n G Psi and
  all-gather of the updated parameters (n-1)/n P Psi, once per step;
- stage 3 (FSDP FULL_SHARD, ZeRO-3): every micro-batch all-gathers the parameters for forward and
  again for backward and reduce-scatters the gradients, m (n-1)/n (2 P + G) Psi per step;
- HSDP (stage 3 sharded in groups of g ranks): the stage-3 traffic inside the group, plus an
  all-reduce of the gradient shard, 2 (r-1)/r G Psi/g with r = n/g replicas, once per step.

Expert parameters are reduced over the expert-data-parallel group (n / EP ranks). Overlap is only as
far as the frameworks take it: the once-per-step gradient reduction hides behind the backward of the
last micro-batch, the parameter all-gather behind the forward of the first (Megatron-LM
--overlap-grad-reduce / --overlap-param-gather); FSDP prefetches layer by layer, so each micro-batch's
gathers hide behind that micro-batch's forward and backward, except the first layer's. What does not
fit in its window is exposed; what fits still slows compute by `comm_contention`. Every collective
also waits NCCL's ring latency (comm.ring_latency, linear in the ranks): FSDP issues one per layer and
kind every micro-batch, Megatron-LM one per bucket of max(40M, 1M x DP) parameters; the last bucket of a
backward and the first gather of a forward have no compute left to hide behind.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.derive.estimate.comm import latency_steps, link, ring_latency
from validator.derive.estimate.constants import TrainingConstants
from validator.derive.estimate.memory import expert_params
from validator.derive.estimate.setup import TrainingSetup

PARAM_BYTES = 2.0


@fact
class DpTraffic:
    """Bytes one GPU moves in data-parallel collectives per step, by kind (the ring volume it sends)."""

    gather: float = 0.0      # parameter all-gathers
    reduce: float = 0.0      # gradient reduce-scatters / all-reduces
    replicate: float = 0.0   # HSDP: gradient all-reduce across replicas

    @property
    def total(self) -> float:
        return self.gather + self.reduce + self.replicate


@fact
class DpCost:
    traffic: DpTraffic
    time: float              # seconds of DP collectives per step, nothing overlapped
    exposed: float           # seconds the step waits for them (incl. contention)


def param_split(s: TrainingSetup) -> tuple[float, float]:
    """(dense, expert) parameters in one GPU's model-parallel shard."""
    total = s.model.params_b * 1e9
    experts = min(expert_params(s.model), total)
    return (total - experts) / (s.tp * s.pp), experts / (s.tp * s.pp * s.ep)


def _groups(s: TrainingSetup) -> tuple[int, int]:
    """(shard group, replicas) of the dense parameters."""
    n = s.dp * s.cp
    g = min(n, s.sharding.group) if s.sharding.group else n
    return g, max(1, n // g)


def dp_traffic(s: TrainingSetup) -> DpTraffic:
    """Ring volume one GPU sends per step; dense and expert parameters each over their own group."""
    dense, experts = param_split(s)
    stage, gb, m = s.sharding.stage, s.sharding.grad_bytes, s.microbatches
    t = s.trainable_share            # frozen weights have no gradient; ZeRO-3 still gathers them
    gather = reduce = replicate = 0.0
    for psi, n in ((dense, s.dp * s.cp), (experts, max(1, s.dp * s.cp // s.ep))):
        if psi <= 0 or n <= 1:
            continue
        if stage == 0:
            reduce += 2 * (n - 1) / n * gb * psi * t
        elif stage < 3:
            reduce += (n - 1) / n * gb * psi * t
            gather += (n - 1) / n * PARAM_BYTES * psi * t
        else:
            g = min(n, s.sharding.group or n)
            r = max(1, n // g)
            gather += m * 2 * (g - 1) / g * PARAM_BYTES * psi
            reduce += m * (g - 1) / g * gb * psi * t
            replicate += 2 * (r - 1) / r * gb * psi / g * t
    return DpTraffic(gather, reduce, replicate)


def _overlap(comm: float, window: float, c: TrainingConstants, pieces: int = 1) -> float:
    """Time the step waits for `comm` split in `pieces` buckets issued as `window`'s compute produces
    (or consumes) them: the last (first) bucket has no compute left to hide behind."""
    tail = comm / pieces if window > 0 else comm
    hidden = min(comm - tail, window)
    return comm - hidden + c.comm_contention * hidden


def buckets(s: TrainingSetup, c: TrainingConstants, n: int) -> int:
    """Megatron-LM DDP buckets of this GPU's trained parameters (max(40M, 1M x ranks) parameters each)."""
    dense, experts = param_split(s)
    size = max(c.dp_bucket_params[0], c.dp_bucket_params[1] * n)
    return max(1, math.ceil((dense + experts) * s.trainable_share / size))


def dp_cost(s: TrainingSetup, c: TrainingConstants, forward: float, backward: float, layers: int) -> DpCost:
    """`forward`/`backward`: seconds of one micro-batch's forward/backward on this GPU's stage (the
    overlap windows); `layers`: the stage's layers, one FSDP unit each (a gather and a reduce-scatter of
    its own, each paying the ring's latency; the first layer's gather cannot be prefetched)."""
    traffic = dp_traffic(s)
    if s.dp * s.cp <= 1:
        return DpCost(traffic, 0.0, 0.0)
    if not s.dp_comm_overlap:             # reduced after backward, gathered before forward: nothing hidden
        forward = backward = 0.0
    g, _ = _groups(s) if s.sharding.stage == 3 else (s.dp * s.cp, 1)
    stride = s.tp * s.cp if s.cp == 1 else s.tp          # DP x CP ranks reduce together: stride TP
    shard_link = link(s, c, s.tp * s.cp * g, stride)
    full_link = link(s, c, s.tp * s.cp * s.dp, stride * g)
    ring = ring_latency(s, c, g, stride)                  # one all-gather or reduce-scatter
    gather = traffic.gather / shard_link.bandwidth
    reduce = traffic.reduce / shard_link.bandwidth
    replicate = traffic.replicate / full_link.bandwidth
    if s.sharding.stage < 3:
        nb = buckets(s, c, g)
        lat = latency_steps(g) * shard_link.latency if s.sharding.stage == 0 else ring
        gather, reduce = gather + nb * ring * (gather > 0), reduce + nb * lat
        exposed = _overlap(reduce, backward, c, nb) + _overlap(gather, forward, c, nb)
        return DpCost(traffic, gather + reduce, exposed)
    m = s.microbatches
    ag, rs = gather / (2 * m) + layers * ring, reduce / m + layers * ring
    if replicate > 0:                     # HSDP: one all-reduce per unit across the replicas
        replicate += layers * latency_steps(_groups(s)[1]) * full_link.latency
    per_mb = _overlap(ag, forward, c, layers) + _overlap(ag + rs, backward, c, layers)
    exposed = m * per_mb + _overlap(replicate, backward, c, layers)     # HSDP: each unit's all-reduce
    return DpCost(traffic, m * (2 * ag + rs) + replicate, exposed)
