"""INF004 disaggregation-transport: KV transfer over RDMA within the TTFT budget."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.derive.estimate.memory import kv_bytes_per_token


def disaggregation_transport(ctx: Context) -> Iterator[Hit]:
    """Prefill/decode disaggregation ships each prompt's KV cache over RDMA on a fabric that exists, and
    the transfer fits in a share of the TTFT budget.

    Source: DistServe (Zhong et al., OSDI 2024) and Mooncake (Qin et al., FAST 2025): the KV cache of
    each request moves from prefill to decode over RDMA or NVLink; its size from the model's layers,
    KV heads and head size (vLLM AttentionSpec.page_size_bytes).
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


RULE = Rule("INF004", "disaggregation-transport", "KV transfer over RDMA within the TTFT budget", "error", "inference",
            disaggregation_transport)
