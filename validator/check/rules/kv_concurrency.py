"""INF003 kv-concurrency: KV-cache-limited concurrency covers the target."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def kv_concurrency(ctx: Context) -> Iterator[Hit]:
    """Per attention rank, (HBM x utilization - weights - reserve) / KV bytes of one request at the
    maximum context is the most requests it can hold; a replica holds that times its DP-attention
    ranks, and the fleet must cover the target concurrency.

    Source: vLLM KV cache sizing (num_blocks / cdiv(max_model_len, block_size); the startup log's
    "Maximum concurrency for N tokens per request"); Kwon et al., "PagedAttention" (SOSP 2023); with DP
    attention each rank keeps only its own requests' KV (SGLang DP attention, DeepSeek-V3 serving).
    Fix: add replicas, use FP8 KV cache, shorten max_context_tokens, or use GPUs with more HBM.
    Example:
        inference: {max_context_tokens: 4096, targets: {concurrent_requests: 100000}}
    """
    inf = ctx.inference
    target = inf.targets.concurrent_requests
    if target is None:
        return
    pool = ctx.derived.pools[-1]  # the decode pool holds the requests when disaggregated
    cap, count = pool.kv, pool.planned
    fleet = cap.max_concurrency * count
    if fleet < target:
        yield Hit(f"KV-limited concurrency {cap.max_concurrency} per replica x {count} replicas = {fleet} < target "
                  f"{target}: per GPU ({cap.usable_gb:.1f} GB usable - {cap.weights_gb:.1f} GB weights - "
                  f"{cap.reserve_gb:g} GB reserve) / ({cap.kv_bytes_per_token_per_gpu:,.0f} B/token x "
                  f"{inf.max_context_tokens} tokens), x {cap.ranks} attention rank(s)",
                  ("inference", "targets", "concurrent_requests"))


RULE = Rule("INF003", "kv-concurrency", "KV-cache-limited concurrency covers the target", "error", "inference",
            kv_concurrency)
