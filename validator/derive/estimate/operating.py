"""Operating points of a replica at full load, every request's prefill included
(docs/estimator.md, Inference). Per attention rank and pipeline stage; a replica runs `dp` ranks
in lock-step and keeps `pp` micro-batches in flight (a token crosses every stage: TPOT = pp x step).

Mixed steps (chunked prefill): each step carries the decode tokens of the running sequences and the
prefill tokens of as many new requests as finish, so x completions per step need x (O-1)/E decode
sequences and x I' prefill tokens (E tokens per decode step with speculation, I' = I x (1 - prefix
hit)). The largest x the engine admits -- sequence cap, KV pool, token budget -- gives the most
requests per second, because a step's time grows less than linearly with its tokens.
Separate steps (no chunking): a prefill step of whole prompts up to the token budget alternates with
decode steps of the running batch.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.derive.estimate.step import ServingSetup, Step, step_time


@fact
class Workload:
    prompt: float            # I, mean prompt tokens
    output: float            # O, mean output tokens (the first comes out of prefill)
    kv_tokens_rank: float    # KV pool of one attention rank, tokens (all micro-batches)

    def decode_steps(self, per_step: float) -> float:
        return max(self.output - 1, 0.0) / per_step


@fact
class Point:
    """One operating point of one replica."""

    requests_per_s: float     # whole replica
    output_tokens_per_s: float    # whole replica
    batch: float              # running sequences per attention rank, all micro-batches
    step: Step                # one step of one micro-batch
    tpot_s: float             # seconds per output token of one sequence
    prefill_tokens: float     # prefill tokens per step per rank
    limit: str                # what caps the batch: max_num_seqs, kv_cache, token_budget, ...


def fresh_prompt(s: ServingSetup, w: Workload) -> float:
    return w.prompt * (1 - s.engine.prefix_hit)


def contexts(s: ServingSetup, w: Workload) -> tuple[float, float]:
    """Mean KV context of a decoding sequence, mean attended positions of a prefill token."""
    return w.prompt + w.output / 2, w.prompt * s.engine.prefix_hit + fresh_prompt(s, w) / 2


def seq_cap(s: ServingSetup, w: Workload) -> tuple[float, str]:
    """Sequences one rank holds at once (all micro-batches) and what caps them."""
    held = w.prompt + (w.output if s.engine.admission == "reserve" else w.output / 2)
    kv = math.floor(w.kv_tokens_rank / held) if held > 0 else math.inf
    cap = s.engine.max_num_seqs
    if cap is not None and cap <= kv:
        return float(cap), "max_num_seqs"
    return float(kv), "kv_cache"


def max_load(s: ServingSetup, w: Workload) -> Point:
    """The most requests per second one replica completes (offline / saturated server)."""
    e = s.engine
    per_step = e.tokens_per_step
    pp, dp = s.shape.pp, s.shape.dp
    cap, limit = seq_cap(s, w)
    fresh = fresh_prompt(s, w)
    dec_ctx, pf_ctx = contexts(s, w)
    steps = w.decode_steps(per_step)
    q = 1 + e.spec_tokens
    if cap < 1:
        return Point(0.0, 0.0, 0.0, Step(math.inf), math.inf, 0.0, limit)
    if e.chunked_prefill:
        x_seq = cap / pp / steps if steps else math.inf
        x_tok = e.max_batched_tokens / (steps * q + fresh) if steps * q + fresh > 0 else math.inf
        x = min(x_seq, x_tok)
        limit = limit if x_seq <= x_tok else "token_budget"
        step = step_time(s, x * steps, dec_ctx, x * fresh, pf_ctx)
        rate = dp * x / step.seconds
        return Point(rate, rate * w.output, x * steps * pp, step, pp * step.seconds / per_step, x * fresh, limit)
    batch = cap / pp
    k = max(1.0, math.floor(e.max_batched_tokens / fresh)) if fresh else 1.0
    prefill = step_time(s, 0, dec_ctx, k * fresh, pf_ctx)
    decode = step_time(s, batch, dec_ctx, 0, pf_ctx) if steps else Step(0.0)
    per_request = prefill.seconds / k + (steps * decode.seconds / batch if steps else 0.0)
    tpot = pp * (decode.seconds + prefill.seconds * batch / (k * max(steps, 1.0))) / per_step
    return Point(dp / per_request, dp / per_request * w.output, cap, decode, tpot, k * fresh, limit)


def prefill_rate(s: ServingSetup, w: Workload, tokens: float | None = None) -> tuple[float, Step]:
    """Prefill-only instance (disaggregated): prompt tokens per second of the replica (cache hits
    excluded) with steps of `tokens` (default: the token budget) prompt tokens per rank."""
    fresh = fresh_prompt(s, w)
    n = tokens or max(float(s.engine.max_batched_tokens), fresh)
    step = step_time(s, 0, 0, n, contexts(s, w)[1])
    return s.shape.dp * n / step.seconds, step


def prefill_requests(s: ServingSetup, w: Workload) -> float:
    """Requests per second a prefill-only replica completes: its rate of uncached prompt tokens over the
    uncached tokens of one prompt (both in the same unit: cache hits are neither computed nor counted)."""
    fresh = fresh_prompt(s, w)
    return prefill_rate(s, w)[0] / fresh if fresh > 0 else math.inf


def decode_rate(s: ServingSetup, w: Workload, batch: float | None = None) -> Point:
    """Decode-only instance (disaggregated): output tokens per second of the replica at `batch`
    sequences per rank (default: what the sequence cap and the KV pool allow)."""
    cap, limit = seq_cap(s, w)
    if batch is not None:
        cap, limit = batch, "given"
    if cap < 1:
        return Point(0.0, 0.0, 0.0, Step(math.inf), math.inf, 0.0, limit)
    pp = s.shape.pp
    step = step_time(s, cap / pp, contexts(s, w)[0], 0, 0)
    tokens = s.shape.dp * cap / pp * s.engine.tokens_per_step / step.seconds
    requests = tokens / max(w.output - 1, 1.0)
    return Point(requests, tokens, cap, step, pp * step.seconds / s.engine.tokens_per_step, 0.0, limit)


def static_batch(s: ServingSetup, w: Workload, batch: int) -> tuple[float, float]:
    """Static batching (TensorRT-LLM v0.9 gptSessionBenchmark): the whole batch is prefilled, then decoded
    at the padded context. Returns (first-token latency of a batch-1 prompt, output tokens/s/GPU)."""
    dec_ctx, pf_ctx = contexts(s, w)
    single = step_time(s, 0, 0, w.prompt, pf_ctx).seconds
    prefill = step_time(s, 0, 0, batch * w.prompt, pf_ctx).seconds
    decode = step_time(s, batch, dec_ctx, 0, 0).seconds
    total = prefill + max(w.output - 1, 0) * decode
    return single, batch * w.output / total / s.shape.gpus
