"""Inference rules (INF): replicas are independent; memory decides the concurrency."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit
from validator.check.context import Context
from validator.derive.estimate.memory import kv_bytes_per_token, kv_capacity, params_per_gpu, precision_bytes
from validator.read.model import Replica


def _pools(ctx: Context) -> list[tuple[tuple[str | int, ...], Replica, int]]:
    inf = ctx.inference
    if inf.disaggregation:
        d = inf.disaggregation
        return [(("inference", "disaggregation", "prefill", "replica"), d.prefill.replica, d.prefill.replicas),
                (("inference", "disaggregation", "decode", "replica"), d.decode.replica, d.decode.replicas)]
    count = inf.replicas or (inf.autoscaling.max if inf.autoscaling else 1)
    return [(("inference", "replica"), inf.replica, count)]


def _utilization(ctx: Context) -> float:
    return ctx.inference.gpu_memory_utilization or ctx.resolved.defaults["gpu_memory_utilization"]


def replica_fit(ctx: Context) -> Iterator[Hit]:
    """A replica's weights at their precision plus the runtime reserve fit the replica's HBM
    (HBM x gpu_memory_utilization per GPU, as serving engines allocate it).

    Source: vLLM memory profiling (weights + activations + non-torch memory within
    gpu_memory_utilization); shared/docs/estimator-notes.md 2.7.
    Fix: use more GPUs per replica (higher TP), a lower weight precision, or GPUs with more HBM.
    Example:
        inference: {model: llama3-405b, replica: {gpus: 1}}   # 811 GB of bf16 weights on one GPU
    """
    inf = ctx.inference
    model = ctx.resolved.model
    hbm = ctx.resolved.gpu.memory_gb * _utilization(ctx)
    for path, rep, _ in _pools(ctx):
        weights = params_per_gpu(model, rep.tp, rep.pp, rep.ep) * precision_bytes(inf.weight_precision) / 1e9
        need = weights + ctx.threshold("inference_reserve_gb")
        if need > hbm:
            yield Hit(f"{weights:.1f} GB of {inf.weight_precision} weights + {ctx.threshold('inference_reserve_gb'):g}"
                      f" GB reserve per GPU > {hbm:.1f} GB usable HBM", (*path, "gpus"))
        if rep.tp * rep.pp * rep.ep > rep.gpus:
            yield Hit(f"TP {rep.tp} x PP {rep.pp} x EP {rep.ep} needs more than the replica's {rep.gpus} GPUs",
                      (*path, "gpus"))


def replica_in_nvlink(ctx: Context) -> Iterator[Hit]:
    """A replica's tensor-parallel group sits inside one NVLink domain: its all-reduces run every layer
    of every token. Pipeline stages and expert groups may span servers over the compute fabric (the
    pipeline sends one activation per stage boundary; EP beyond NVLink is INF006's business).

    Source: shared/docs/domain.md sections 2 and 4 (TP talks most and must stay inside the NVLink
    domain; a large model's replica is an 8-GPU server with TP inside NVLink).
    Fix: make TP at most the NVLink domain size (8 on HGX, 72 on NVL72) and a divisor of it; use PP
    across servers.
    Example:
        inference: {replica: {gpus: 16, tp: 16}}   # on 8-GPU HGX servers
    """
    domain = ctx.resolved.nvlink_domain_gpus
    for path, rep, _ in _pools(ctx):
        if rep.tp > 1 and (rep.tp > domain or domain % rep.tp):
            yield Hit(f"TP {rep.tp} of a replica does not fit in (or divide) the {domain}-GPU NVLink domain",
                      (*path, "tp"))


def kv_concurrency(ctx: Context) -> Iterator[Hit]:
    """Per replica, (HBM x utilization - weights - reserve) / KV bytes of one request at the maximum
    context is the most requests it can hold; the fleet must cover the target concurrency.

    Source: vLLM KV cache sizing (num_blocks / cdiv(max_model_len, block_size));
    shared/docs/estimator-notes.md 2.7.
    Fix: add replicas, use FP8 KV cache, shorten max_context_tokens, or use GPUs with more HBM.
    Example:
        inference: {max_context_tokens: 4096, targets: {concurrent_requests: 100000}}
    """
    inf = ctx.inference
    target = inf.targets.concurrent_requests
    if target is None:
        return
    _, rep, count = _pools(ctx)[-1]  # decode pool holds the requests when disaggregated
    cap = kv_capacity(ctx.resolved.model, inf, ctx.resolved.gpu.memory_gb, _utilization(ctx),
                      ctx.threshold("inference_reserve_gb"), rep.tp, rep.pp, rep.gpus)
    fleet = cap.max_concurrency * count
    if fleet < target:
        yield Hit(f"KV-limited concurrency {cap.max_concurrency} per replica x {count} replicas = {fleet} < target "
                  f"{target}: per GPU ({cap.usable_gb:.1f} GB usable - {cap.weights_gb:.1f} GB weights - "
                  f"{cap.reserve_gb:g} GB reserve) / ({cap.kv_bytes_per_token_per_gpu:,.0f} B/token x "
                  f"{inf.max_context_tokens} tokens)", ("inference", "targets", "concurrent_requests"))


def disaggregation_transport(ctx: Context) -> Iterator[Hit]:
    """Prefill/decode disaggregation ships each prompt's KV cache over RDMA on a fabric that exists, and
    the transfer fits in a share of the TTFT budget.

    Source: shared/docs/domain.md section 4 (ship the KV cache over a fast link: RDMA, NVLink);
    DistServe, Mooncake; shared/docs/estimator-notes.md 2.8.
    Fix: use `kv_transfer: rdma` on the compute fabric, or faster NICs.
    Example:
        inference: {disaggregation: {kv_transfer: tcp, ...}}
    """
    inf = ctx.inference
    d = inf.disaggregation
    if d is None:
        return
    base = ("inference", "disaggregation")
    if d.kv_transfer == "tcp":
        yield Hit("the KV cache moves over TCP; disaggregation needs RDMA (or NVLink)", (*base, "kv_transfer"))
    fab = ctx.resolved.fabrics.get(d.kv_transfer_fabric)
    if fab is None:
        yield Hit(f"KV transfer fabric '{d.kv_transfer_fabric}' is not in the design", (*base, "kv_transfer_fabric"))
        return
    budget = inf.targets.ttft_ms
    if budget is None:
        return
    kv_bytes = inf.prompt_tokens * kv_bytes_per_token(ctx.resolved.model, inf.kv_precision)
    servers = max(1, d.decode.replica.gpus // ctx.resolved.server.gpus)
    bw = fab.links_per_server * fab.nic_speed_gbps * servers / 8 * 1e9
    ms = kv_bytes / bw * 1e3 if bw else float("inf")
    share = ctx.threshold("kv_transfer_ttft_share")
    if ms > budget * share:
        yield Hit(f"the prompt's KV cache ({kv_bytes / 1e9:.2f} GB) takes {ms:.1f} ms, over {share:.0%} of the "
                  f"{budget:g} ms TTFT budget", (*base, "kv_transfer_fabric"))


def over_built_fabric(ctx: Context) -> Iterator[Hit]:
    """Independent replicas do not all-reduce with each other: a lossless InfiniBand fabric for them is
    money that belongs in HBM. RoCE hardware and operations cost about 1/3 to 1/2 of InfiniBand.

    Source: shared/docs/domain.md section 1 (cost note); exception: MoE replicas with EP across an
    NVL72-class domain.
    Fix: use an Ethernet (RoCE) compute fabric for the fleet.
    Example:
        kind: InferenceFleet
        fabrics: {compute: {type: infiniband, ...}}
    """
    fab = ctx.design.fabrics.compute
    if fab is not None and fab.type == "infiniband":
        switches = ctx.topology.fabrics["compute"].switches
        noun = "switch" if switches == 1 else "switches"
        yield Hit(f"independent replicas on a lossless InfiniBand fabric ({switches} {noun}); an Ethernet "
                  "design costs about 1/3 to 1/2 as much", ("fabrics", "compute", "type"))


def expert_parallel_domain(ctx: Context) -> Iterator[Hit]:
    """Expert parallelism across more GPUs than the NVLink domain sends its all-to-all over the scale-out
    fabric, which is far slower.

    Source: shared/docs/domain.md sections 1 and 4 (EP across an NVL72-class NVLink domain).
    Fix: keep EP within the NVLink domain.
    Example:
        inference: {model: deepseek-v3, replica: {gpus: 144, ep: 144}}   # two NVL72 racks
    """
    domain = ctx.resolved.nvlink_domain_gpus
    for path, rep, _ in _pools(ctx):
        if rep.ep > 1 and rep.gpus > domain:
            yield Hit(f"EP {rep.ep} over {rep.gpus} GPUs spans more than the {domain}-GPU NVLink domain",
                      (*path, "ep"))


def latency_targets(ctx: Context) -> Iterator[Hit]:
    """The estimated time to first token (batch 1, plus the KV transfer when disaggregated) and time per
    output token (at the batch the KV cache allows) meet the design's targets.

    Source: the clusterplan estimator (`clusterplan estimate`), checked against TensorRT-LLM v0.9
    published latencies and throughput (benchmarks/accuracy.py).
    Fix: use more GPUs per replica (higher TP), FP8 weights, a smaller batch per replica, or faster GPUs.
    Example:
        inference: {targets: {ttft_ms: 1}}   # no prefill finishes in 1 ms
    """
    targets = ctx.inference.targets
    est = ctx.estimate
    if targets.ttft_ms is not None and est["ttft_ms"] > targets.ttft_ms:
        yield Hit(f"estimated TTFT {est['ttft_ms']:,.0f} ms > target {targets.ttft_ms:g} ms",
                  ("inference", "targets", "ttft_ms"))
    if targets.tpot_ms is not None and est["tpot_ms"] > targets.tpot_ms:
        yield Hit(f"estimated TPOT {est['tpot_ms']:.1f} ms at batch {est['batch']} > target {targets.tpot_ms:g} ms",
                  ("inference", "targets", "tpot_ms"))
