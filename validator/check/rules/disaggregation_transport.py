"""INF004 disaggregation-transport: KV transfer over RDMA within the TTFT budget."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def disaggregation_transport(ctx: Context) -> Iterator[Hit]:
    """Prefill/decode disaggregation ships each prompt's KV cache over RDMA on a fabric that exists, and
    the transfer fits in a share of the TTFT budget. One request's KV leaves from the GPUs of the prefill
    attention rank that computed it and lands on one decode rank, each GPU over its own NICs (not the
    whole pool's bandwidth); the estimate uses the same transfer time.

    Source: DistServe (Zhong et al., OSDI 2024) and Mooncake (Qin et al., FAST 2025): the KV cache of
    each request moves from prefill to decode over RDMA or NVLink; its size from the model's layers,
    KV heads and head size (vLLM AttentionSpec.page_size_bytes); each rank sends its own requests' KV
    over its own GPUs' NICs (SGLang/Mooncake transfer engine, one rank to one rank).
    Fix: use `kv_transfer: rdma` on the compute fabric, faster NICs, or an FP8 KV cache.
    Example:
        inference: {disaggregation: {kv_transfer: tcp}}
    """
    inf = ctx.inference
    d = inf.disaggregation
    if d is None:
        return
    base = ("inference", "disaggregation")
    if d.kv_transfer == "tcp":
        yield Hit("the KV cache moves over TCP; disaggregation needs RDMA (or NVLink)", (*base, "kv_transfer"))
    if d.kv_transfer != "nvlink" and ctx.resolved.fabrics.get(d.kv_transfer_fabric) is None:
        yield Hit(f"KV transfer fabric '{d.kv_transfer_fabric}' is not in the design", (*base, "kv_transfer_fabric"))
        return
    budget = inf.targets.ttft_ms
    transfer = ctx.derived.kv_transfer
    if budget is None or transfer is None:
        return
    ms = transfer.seconds * 1e3
    share = ctx.threshold("kv_transfer_ttft_share")
    if ms > budget * share:
        yield Hit(f"the prompt's KV cache ({transfer.bytes:,.0f} B) takes {ms:.1f} ms over {transfer.gbps:,.0f} Gb/s "
                  f"({transfer.links:g} links of one attention rank), over {share:.0%} of the {budget:g} ms TTFT "
                  "budget", (*base, "kv_transfer_fabric"))


RULE = Rule("INF004", "disaggregation-transport", "KV transfer over RDMA within the TTFT budget", "error", "inference",
            disaggregation_transport)
