"""The inference estimate of a design: engine step model at full load (every request's prefill
counted), latency at the target load, replicas needed at the SLOs, capacity of the planned fleet,
KV cache and cost (docs/estimator.md, Inference)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from validator.base.facts import fact
from validator.derive.estimate.engine import engine_settings, serving_constants
from validator.derive.estimate.fleet import Slo, capacity, replicas_for
from validator.derive.estimate.kv import KvCapacity, kv_capacity, shape_of
from validator.derive.estimate.network import KvTransfer, kv_transfer, network_of
from validator.derive.estimate.operating import Workload, decode_rate, max_load, prefill_rate, prefill_requests
from validator.derive.estimate.queueing import Latency, aggregated, decode_pool, prefill_pool
from validator.derive.estimate.step import ServingSetup
from validator.expand.topology import Topology
from validator.read.inference import Replica


@fact
class Pool:
    """One pool of identical replicas (the whole fleet when aggregated)."""

    role: str                      # aggregated | prefill | decode
    setup: ServingSetup
    workload: Workload
    kv: KvCapacity
    planned: int

    @property
    def path(self) -> tuple[str, ...]:
        """Key path of this pool's replica in the design."""
        if self.role == "aggregated":
            return ("inference", "replica")
        return ("inference", "disaggregation", self.role, "replica")


@dataclass
class InferenceEstimate:
    mode: str
    engine: str
    weights_gb_per_gpu: float
    kv_bytes_per_token: int                   # exact, all layers
    kv_bytes_per_token_per_gpu: int
    kv_gb_per_gpu: float
    kv_tokens_per_replica: int
    max_concurrency_per_replica: int
    batch: int                                # running sequences per replica at full load
    batch_limit: str                          # what caps it
    requests_per_s_per_replica: float         # full load, prefill included
    output_tokens_per_s_per_replica: float
    output_tokens_per_s_per_gpu: float
    total_tokens_per_s_per_gpu: float         # input + output tokens
    prefill_tokens_per_s_per_gpu: float | None
    decode_tokens_per_s_per_gpu: float | None     # decode pool alone (disaggregated)
    target_qps: float | None                  # with headroom
    ttft_ms: float | None                     # p99 at the target load on the planned fleet
    tpot_ms: float | None
    ttft_p50_ms: float | None
    tpot_p50_ms: float | None
    kv_transfer_ms: float | None
    kv_transfer_gbps: float | None
    replicas_needed: int | None
    prefill_replicas_needed: int | None
    replicas_planned: int
    prefill_replicas_planned: int | None
    fleet_capacity_qps: float
    headroom_pct: float | None                # capacity over target, percent
    cost_per_million_tokens: float | None     # output tokens
    cost_per_million_total_tokens: float | None
    assumptions: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def _pool(topology: Topology, role: str, rep: Replica, planned: int, reserve: float) -> Pool:
    r = topology.resolved
    inf = r.inference
    shape = shape_of(rep)
    setup = ServingSetup(r.model, r.gpu, shape, inf.weight_precision, inf.kv_precision,
                         engine_settings(inf.engine, r.gpu), network_of(topology), serving_constants(r.gpu.id))
    util = inf.gpu_memory_utilization or r.defaults["gpu_memory_utilization"]
    kv = kv_capacity(r.model, inf, r.gpu.memory_gb, util, reserve, shape.tp, shape.pp, shape.gpus, shape.ep, shape.dp)
    return Pool(role, setup, Workload(inf.prompt_tokens, inf.output_tokens, kv.tokens_per_rank), kv, planned)


def pools(topology: Topology) -> list[Pool]:
    r = topology.resolved
    inf = r.inference
    reserve = r.threshold("inference_reserve_gb")
    d = inf.disaggregation
    if d is not None:
        return [_pool(topology, "prefill", d.prefill.replica, d.prefill.replicas, reserve),
                _pool(topology, "decode", d.decode.replica, d.decode.replicas, reserve)]
    return [_pool(topology, "aggregated", inf.replica, inf.planned_replicas, reserve)]


def slo_of(topology: Topology) -> Slo:
    t = topology.resolved.inference.targets

    def s(ms: float | None) -> float | None:
        return None if ms is None else ms / 1e3

    return Slo(s(t.ttft_p50_ms), s(t.ttft_ms), s(t.tpot_p50_ms), s(t.tpot_ms))


def target_qps(topology: Topology) -> float | None:
    inf = topology.resolved.inference
    t = inf.targets
    loads = [x for x in (t.qps, t.output_tokens_per_s / inf.output_tokens if t.output_tokens_per_s else None) if x]
    return max(loads) * (1 + t.headroom_pct / 100) if loads else None


def transfer_of(topology: Topology) -> KvTransfer | None:
    """The KV transfer of one request between the design's prefill and decode pools (None: aggregated,
    or no fabric to carry it)."""
    r = topology.resolved
    d = r.inference.disaggregation
    if d is None:
        return None
    net = network_of(topology, d.kv_transfer_fabric)
    return kv_transfer(r.model, r.inference.kv_precision, r.inference.prompt_tokens, shape_of(d.prefill.replica),
                       shape_of(d.decode.replica), net, serving_constants(r.gpu.id), d.kv_transfer)


@fact
class Sizing:
    latency: Latency | None          # at the target (or a light) load on the planned fleet
    needed: int | None
    prefill_needed: int | None
    capacity_qps: float


def _ms(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x * 1e3


def _size_aggregated(p: Pool, load: float | None, slo: Slo, concurrency: int | None) -> Sizing:
    def lat(lam: float) -> Latency | None:
        return aggregated(p.setup, p.workload, lam)

    ceiling = max_load(p.setup, p.workload).requests_per_s
    needed = replicas_for(lat, load, slo) if load else None
    if concurrency and p.kv.max_concurrency:
        needed = max(needed or 0, math.ceil(concurrency / p.kv.max_concurrency))
    at = lat(load / p.planned) if load else lat(ceiling * 1e-3)
    return Sizing(at, needed, None, capacity(lat, p.planned, slo, ceiling))


def _size_disaggregated(pre: Pool, dec: Pool, load: float | None, slo: Slo, transfer_s: float,
                        concurrency: int | None) -> Sizing:
    def lat_p(lam: float) -> Latency | None:
        return prefill_pool(pre.setup, pre.workload, lam)

    def lat_d(lam: float) -> Latency | None:
        return decode_pool(dec.setup, dec.workload, lam)

    ttft_slo = Slo(slo.ttft_p50_s, slo.ttft_p99_s)
    tpot_slo = Slo(tpot_p50_s=slo.tpot_p50_s, tpot_p99_s=slo.tpot_p99_s)
    ceil_p = prefill_requests(pre.setup, pre.workload)
    ceil_d = decode_rate(dec.setup, dec.workload).requests_per_s
    needed_p = replicas_for(lat_p, load, ttft_slo, transfer_s) if load else None
    needed_d = replicas_for(lat_d, load, tpot_slo) if load else None
    if concurrency and dec.kv.max_concurrency:
        needed_d = max(needed_d or 0, math.ceil(concurrency / dec.kv.max_concurrency))
    a = lat_p(load / pre.planned) if load else lat_p(ceil_p * 1e-3)
    b = lat_d(load / dec.planned) if load else lat_d(ceil_d * 1e-3)
    both = None if a is None or b is None else Latency(
        a.ttft_p50_s + transfer_s, a.ttft_p99_s + transfer_s, b.tpot_p50_s, b.tpot_p99_s, b.batch)
    cap = min(capacity(lat_p, pre.planned, ttft_slo, ceil_p, transfer_s), capacity(lat_d, dec.planned, tpot_slo,
                                                                                      ceil_d))
    return Sizing(both, needed_d, needed_p, cap)


def estimate_inference(topology: Topology, gpu_hour_usd: float | None,
                       serving_pools: list[Pool] | None = None) -> InferenceEstimate:
    """`serving_pools`: the design's pools when already computed (Derived.pools), else computed here."""
    r = topology.resolved
    inf = r.inference
    ps = serving_pools if serving_pools is not None else pools(topology)
    main = ps[-1]                          # the pool that decodes and holds the requests
    s, w = main.setup, main.workload
    load, slo = target_qps(topology), slo_of(topology)
    transfer = transfer_of(topology)
    if len(ps) == 2:
        pre = ps[0]
        prefill_tok, _ = prefill_rate(pre.setup, pre.workload)
        point = decode_rate(s, w)
        rps = point.requests_per_s
        sizing = _size_disaggregated(pre, main, load, slo, transfer.seconds if transfer else math.inf,
                                     inf.targets.concurrent_requests)
        gpus = main.setup.shape.gpus + pre.setup.shape.gpus * rps / max(prefill_requests(pre.setup, pre.workload),
                                                                         1e-12)
        prefill_per_gpu: float | None = prefill_tok / pre.setup.shape.gpus
    else:
        point = max_load(s, w)
        rps = point.requests_per_s
        sizing = _size_aggregated(main, load, slo, inf.targets.concurrent_requests)
        gpus, prefill_per_gpu = float(s.shape.gpus), None
    out_gpu = rps * w.output / gpus
    total_gpu = rps * (w.prompt + w.output) / gpus
    lat = sizing.latency
    cap = sizing.capacity_qps
    return InferenceEstimate(
        mode="disaggregated" if len(ps) == 2 else "aggregated", engine=s.engine.name,
        weights_gb_per_gpu=main.kv.weights_gb, kv_bytes_per_token=int(main.kv.kv_bytes_per_token),
        kv_bytes_per_token_per_gpu=int(main.kv.kv_bytes_per_token_per_gpu), kv_gb_per_gpu=main.kv.kv_gb,
        kv_tokens_per_replica=main.kv.tokens_per_replica, max_concurrency_per_replica=main.kv.max_concurrency,
        batch=int(point.batch * s.shape.dp), batch_limit=point.limit,
        requests_per_s_per_replica=rps, output_tokens_per_s_per_replica=rps * w.output,
        output_tokens_per_s_per_gpu=out_gpu, total_tokens_per_s_per_gpu=total_gpu,
        prefill_tokens_per_s_per_gpu=prefill_per_gpu,
        decode_tokens_per_s_per_gpu=point.output_tokens_per_s / s.shape.gpus if len(ps) == 2 else None,
        target_qps=load,
        ttft_ms=_ms(lat.ttft_p99_s) if lat else None, tpot_ms=_ms(lat.tpot_p99_s) if lat else None,
        ttft_p50_ms=_ms(lat.ttft_p50_s) if lat else None, tpot_p50_ms=_ms(lat.tpot_p50_s) if lat else None,
        kv_transfer_ms=_ms(transfer.seconds) if transfer else None,
        kv_transfer_gbps=transfer.gbps if transfer else None,
        replicas_needed=sizing.needed, prefill_replicas_needed=sizing.prefill_needed,
        replicas_planned=main.planned, prefill_replicas_planned=ps[0].planned if len(ps) == 2 else None,
        fleet_capacity_qps=cap, headroom_pct=(cap / load - 1) * 100 if load else None,
        cost_per_million_tokens=_per_million(gpu_hour_usd, out_gpu),
        cost_per_million_total_tokens=_per_million(gpu_hour_usd, total_gpu),
        assumptions=_assumptions(main, load is not None))


def _per_million(rate: float | None, tokens_per_s_per_gpu: float) -> float | None:
    if rate is None or tokens_per_s_per_gpu <= 0 or not math.isfinite(tokens_per_s_per_gpu):
        return None
    return rate / (tokens_per_s_per_gpu * 3600 / 1e6)


def _assumptions(p: Pool, loaded: bool) -> dict[str, Any]:
    s, c = p.setup, p.setup.constants
    e = s.engine
    return {
        "engine": e.name, "max_num_seqs": e.max_num_seqs, "max_batched_tokens": e.max_batched_tokens,
        "chunked_prefill": e.chunked_prefill, "kv_admission": e.admission, "prefix_cache_hit_rate": e.prefix_hit,
        "speculative_tokens_per_step": round(e.tokens_per_step, 4),
        "tp": s.shape.tp, "pp": s.shape.pp, "ep": s.shape.ep, "dp_attention": s.shape.dp,
        "gemm_efficiency": c.gemm, "expert_gemm_efficiency": c.expert_gemm, "attention_efficiency": c.attention,
        "memory_efficiency": c.memory, "constants": c.family, "constants_source": c.source,
        "constants_calibrated": c.calibrated,
        "rdma_gbps_per_gpu": s.network.rdma_gbps_per_gpu,
        "arrivals": "Poisson at the target load, split evenly over the planned replicas" if loaded else
        "no target load: latency of a lightly loaded replica",
        "latency_model": "closed-form queueing (docs/estimator.md, Inference)",
        "throughput": "full load, every request's prefill included",
    }
