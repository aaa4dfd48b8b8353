"""What a failure does to the design's workload (the derive stage).

Training is one synchronous job of tp x pp x cp x dp GPUs placed from GPU 0: a server of the job that is
down, cut off from the compute or storage fabric, or has a NIC with every link lost interrupts the job (the
collective on that rail fails; "a single GPU failure may require a restart of the entire job", Llama 3
paper section 3.3.4). It restarts from its last checkpoint on spare servers when the cluster has enough
outside the job (interrupted), else it cannot run at its data-parallel degree until the part is replaced
(blocked; `dp_after` is what fits on the rest). A failure that only removes bandwidth leaves the job running
with every collective at the slowest path (degraded); the in-band and out-of-band networks do not carry a
running job.

Inference replicas are placed from GPU 0 (prefill pool, then decode pool when disaggregated). A replica is
lost when one of its servers is down, cut off from the in-band (front-end) network, or, when the replica
needs the compute fabric (it spans servers, or its KV cache crosses it), cut off from it or left with a
dead NIC.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.derive.estimate.inference import InferenceEstimate
from validator.derive.failures.impact import FabricImpact, Failure
from validator.expand.topology import Topology


@fact
class TrainingImpact:
    status: str                 # unaffected, degraded, interrupted, blocked
    job_gpus: int
    gpus_lost: int              # GPUs of the job on servers it must leave
    dp: int
    dp_after: int               # data-parallel degree that fits the cluster without the lost servers
    path_share: float           # least share of compute-fabric bandwidth on the job's paths (1.0: none lost)
    storage_share: float = 1.0  # the same on the storage fabric (checkpoints and data reads)


@fact
class PoolImpact:
    pool: str                   # fleet, prefill or decode
    planned: int
    lost: int
    needed: int | None


@fact
class InferenceImpact:
    pools: tuple[PoolImpact, ...]
    note: str

    @property
    def replicas_lost(self) -> int:
        return sum(p.lost for p in self.pools)

    @property
    def meets_target(self) -> bool | None:
        """The replicas left carry the target load at the SLOs (None: no target, or none would)."""
        if any(p.needed is None for p in self.pools):
            return None
        return all(p.planned - p.lost >= (p.needed or 0) for p in self.pools)


def training_impact(topology: Topology, failure: Failure, impacts: dict[str, FabricImpact]) -> TrainingImpact:
    p = topology.resolved.training.parallelism
    gps = topology.resolved.server.gpus
    replica = p.tp * p.pp * p.cp
    job_gpus = min(topology.gpus, replica * p.dp)
    job_servers = math.ceil(job_gpus / gps)
    lost = set(failure.servers)
    compute = impacts.get("compute")
    for name in ("compute", "storage"):
        if name in impacts:
            lost |= impacts[name].cut_off
    if compute is not None:
        lost |= compute.nic_lost
    in_job = sorted(s for s in lost if s < job_servers)
    usable = (topology.servers - len(lost)) * gps
    dp_after = min(p.dp, usable // replica) if replica else 0
    share = compute.path_share if compute is not None else 1.0
    storage = impacts["storage"].path_share if "storage" in impacts else 1.0
    if in_job:
        free = topology.servers - job_servers - sum(1 for s in lost if s >= job_servers)
        status = "interrupted" if free >= len(in_job) else "blocked"
        return TrainingImpact(status, job_gpus, len(in_job) * gps, p.dp, dp_after if status == "blocked" else p.dp,
                              share, storage)
    hit = any(impacts[n].any_loss for n in ("compute", "storage") if n in impacts)
    return TrainingImpact("degraded" if hit else "unaffected", job_gpus, 0, p.dp, p.dp, share, storage)


def inference_pools(topology: Topology, est: InferenceEstimate | None) -> list[tuple[str, int, int, int | None]]:
    """(pool, GPUs per replica, planned replicas, replicas needed at the SLOs) in placement order."""
    inf = topology.resolved.inference
    d = inf.disaggregation
    if d is not None:
        return [("prefill", d.prefill.replica.gpus, d.prefill.replicas, est.prefill_replicas_needed if est else None),
                ("decode", d.decode.replica.gpus, d.decode.replicas, est.replicas_needed if est else None)]
    planned = est.replicas_planned if est else inf.planned_replicas
    return [("fleet", inf.replica.gpus, planned, est.replicas_needed if est else None)]


def inference_impact(topology: Topology, failure: Failure, impacts: dict[str, FabricImpact],
                     pools: list[tuple[str, int, int, int | None]]) -> InferenceImpact:
    gps = topology.resolved.server.gpus
    inf = topology.resolved.inference
    d = inf.disaggregation
    lost = set(failure.servers)
    notes = []
    if "inband" in impacts:
        lost |= impacts["inband"].cut_off
    else:
        notes.append("the design has no in-band (front-end) network: request delivery is not modelled")
    out: list[PoolImpact] = []
    first_gpu = 0
    for pool, g, planned, needed in pools:
        needs_compute = g > gps or (d is not None and d.kv_transfer_fabric == "compute" and d.kv_transfer != "nvlink")
        pool_lost = set(lost)
        if needs_compute and "compute" in impacts:
            pool_lost |= impacts["compute"].cut_off | impacts["compute"].nic_lost
        hit: set[int] = set()
        for s in pool_lost:
            lo, hi = s * gps - first_gpu, (s + 1) * gps - 1 - first_gpu
            if hi < 0 or lo >= planned * g:
                continue
            hit.update(range(max(0, lo) // g, min(planned * g - 1, hi) // g + 1))
        out.append(PoolImpact(pool, planned, len(hit), needed))
        first_gpu += planned * g
    return InferenceImpact(tuple(out), "; ".join(notes))
