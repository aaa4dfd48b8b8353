"""Time of one scheduler step of a serving engine (docs/estimator.md, Inference).

A step runs `dec` decoding sequences (each verifying `q` tokens, 1 without speculation) at an average
context of `dec_ctx` tokens, plus `pf` prefill tokens attending on average to `pf_ctx` positions, on one
attention rank of one pipeline stage. Each kernel class is a roofline of its own (kernels run one after
another): dense GEMMs, grouped expert GEMMs (only the experts the step's tokens touch are read; their
weight stream and their matmuls add up rather than overlap, see `_experts`),
decode attention (reads every sequence's KV cache), prefill attention; then the TP all-reduces (2 per
layer), the exposed expert all-to-all (dispatch + combine per MoE layer, over NVLink inside the domain
and the RDMA fabric beyond), the pipeline send, and the host's costs: per step, per layer, and per
sequence in the step (scheduling, sampling and output handling are done for every running request, so a
batch of a thousand pays far more than a batch of one; issue 32).
"""

from __future__ import annotations

import math
from dataclasses import field

from validator.base.estimate_tables import serving as serving_defaults
from validator.base.facts import fact
from validator.derive.estimate.engine import EngineSettings, Network, ServingConstants
from validator.derive.estimate.hardware import peak_flops
from validator.derive.estimate.kv import Params, Shape, kv_bytes_per_token_per_gpu, layer_params
from validator.derive.estimate.memory import precision_bytes
from validator.resolve.catalog.entries import Gpu, LlmModel

ACT_BYTES = 2.0       # activations move in 16 bit


@fact
class ServingSetup:
    model: LlmModel
    gpu: Gpu
    shape: Shape
    weight_precision: str
    kv_precision: str
    engine: EngineSettings
    network: Network
    constants: ServingConstants


@fact
class Step:
    seconds: float
    parts: dict[str, float] = field(default_factory=dict)


def attention_flops(model: LlmModel, decode: bool) -> float:
    """FLOPs per query token, per context position, per layer (all heads). MLA decode runs the absorbed
    form over the shared latent; MLA prefill the expanded heads (DeepSeek-V3 report, FlashMLA)."""
    if model.mla:
        m = model.mla
        if decode:
            return 2.0 * model.heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim)
        return 2.0 * model.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
    return 4.0 * model.heads * model.dim_per_head


def _roofline(flops: float, peak: float, nbytes: float, bandwidth: float) -> float:
    return max(flops / peak, nbytes / bandwidth)


@fact
class _Fixed:
    """The terms of a step's time that depend on the setup alone (the same for every step of it)."""

    p: Params
    q: int
    stage: float
    moe_l: float
    bw: float
    w_peak: float
    a_peak: float
    e_peak: float
    wb: float
    dense_params: float
    dense_bytes: float
    kv_gpu: float
    attn_decode: float
    attn_prefill: float
    overhead: float
    d_peak: float         # decode attention's compute rate and bandwidth (`_decode_kernel`)
    d_bw: float
    sm_free: bool         # decode all-to-all beside the other micro-batch's attention (DeepSeek)


# id(setup) -> (setup, its terms); the setup is kept alive, so its id is not reused while cached
_FIXED: dict[int, tuple[ServingSetup, _Fixed]] = {}


def _fixed(s: ServingSetup) -> _Fixed:
    """A serving estimate computes thousands of steps of one setup (bisections over the load, each a
    fixed point of the step time); their setup terms are computed once, with the same arithmetic."""
    hit = _FIXED.get(id(s))
    if hit is not None and hit[0] is s:
        return hit[1]
    m, c, sh = s.model, s.constants, s.shape
    p = layer_params(m)
    stage = m.layers / sh.pp
    dense_l, moe_l = p.dense_layers / sh.pp, p.moe_layers / sh.pp
    wb = precision_bytes(s.weight_precision)
    dense_params = (stage * p.attention + dense_l * p.dense_mlp + moe_l * p.shared + p.head) / sh.tp
    fixed = _Fixed(
        p=p, q=1 + s.engine.spec_tokens, stage=stage, moe_l=moe_l,
        bw=s.gpu.memory_bandwidth_tbs * 1e12 * c.memory,
        w_peak=peak_flops(s.gpu, s.weight_precision) * c.gemm,
        a_peak=peak_flops(s.gpu, "fp8" if precision_bytes(s.kv_precision) <= 1 else "bf16") * c.attention,
        e_peak=peak_flops(s.gpu, s.weight_precision) * c.expert_gemm,
        wb=wb, dense_params=dense_params, dense_bytes=dense_params * wb,
        kv_gpu=kv_bytes_per_token_per_gpu(m, s.kv_precision, sh.tp, sh.pp),
        attn_decode=attention_flops(m, True), attn_prefill=attention_flops(m, False),
        overhead=c.step_overhead_s + stage * c.layer_overhead_s,
        sm_free=_engine_setting(s.engine.name, "moe_communication") == "all-to-all-sm-free",
        **_decode_kernel(s))
    if len(_FIXED) >= 256:
        _FIXED.clear()
    _FIXED[id(s)] = (s, fixed)
    return fixed


def step_time(s: ServingSetup, dec: float, dec_ctx: float, pf: float, pf_ctx: float) -> Step:
    """One step on one attention rank of one pipeline stage (seconds, with its parts)."""
    m, sh, f = s.model, s.shape, _fixed(s)
    p, q, stage, moe_l, bw, wb = f.p, f.q, f.stage, f.moe_l, f.bw, f.wb
    n = dec * q + pf                                   # tokens through the GEMMs on this rank
    parts = {"dense": _roofline(2 * n * f.dense_params, f.w_peak, f.dense_bytes, bw)}
    if m.moe is not None and moe_l:
        e, k = m.moe.experts, m.moe.top_k
        routed = n * sh.dp                               # tokens the whole replica routes this step
        touched = 1 - (1 - k / e) ** routed if routed else 0.0
        local = moe_l * e * p.expert / (sh.tp * sh.dp)   # expert parameters on this GPU
        flops = 2 * n * k * moe_l * p.expert / sh.tp
        parts["experts"] = _experts(flops, f.e_peak, local * touched * wb, bw)
    kv_gpu = f.kv_gpu
    parts["attention"] = _roofline(dec * q * dec_ctx * stage * f.attn_decode / sh.tp, f.d_peak,
                                   dec * dec_ctx * kv_gpu, f.d_bw) + \
        _roofline(pf * pf_ctx * stage * f.attn_prefill / sh.tp, f.a_peak, pf * kv_gpu, bw)
    parts["tp"] = _tp_allreduce(s, n, stage)
    beside = f.sm_free and dec > 0 and not pf and "experts" in parts
    parts["ep"] = _expert_all_to_all(s, n, moe_l, whole=beside)
    if beside:
        _beside_attention(parts)
    if q > 1 and dec:
        parts["draft"] = _draft(parts, q, stage, dec * q / n)
    parts["pp"] = _pipeline_send(s, n)
    parts["overhead"] = f.overhead + s.constants.seq_overhead_s * (dec + (1.0 if pf else 0.0))
    return Step(sum(parts.values()), parts)


def _decode_kernel(s: ServingSetup) -> dict[str, float]:
    """Decode attention's compute rate and bandwidth: absorbed MLA (16-bit KV) in an engine that runs
    FlashMLA, on a family with FlashMLA's published rates (validator/data/efficiency.yaml serving.flashmla),
    at those rates; otherwise the fitted attention share and memory efficiency."""
    c, g = s.constants, s.gpu
    kv8 = precision_bytes(s.kv_precision) <= 1
    if s.model.mla is not None and not kv8 and c.flashmla is not None and \
            _engine_setting(s.engine.name, "decode_attention") == "flashmla":
        return {"d_peak": peak_flops(g, "bf16") * c.flashmla[0], "d_bw": g.memory_bandwidth_tbs * 1e12 * c.flashmla[1]}
    return {"d_peak": peak_flops(g, "fp8" if kv8 else "bf16") * c.attention,
            "d_bw": g.memory_bandwidth_tbs * 1e12 * c.memory}


def _beside_attention(parts: dict[str, float]) -> None:
    """DeepSeek's decode (profile-data README, DeepSeek-V3 report 3.4.2): two micro-batches, the dispatch,
    expert GEMMs and combine of one beside the attention of the other; the all-to-all frees the SMs. A
    layer takes max(attention, experts + all-to-all): what exceeds the attention stays exposed, split
    between the two in proportion."""
    moe = parts["experts"] + parts["ep"]
    over = max(0.0, moe - parts["attention"])
    parts["experts"], parts["ep"] = over * parts["experts"] / moe, over * parts["ep"] / moe


def _experts(flops: float, peak: float, nbytes: float, bandwidth: float) -> float:
    """Grouped expert GEMMs: each touched expert is a small GEMM of its own few tokens (t per expert), too
    few M-tiles to hide its weight stream behind its matmuls, so the two add up:
    `flops / peak + bytes / bandwidth`. Against the compute peak that is an efficiency of `t / (t + t*)`,
    t* = peak x weight bytes / (2 x bandwidth) the tokens per expert where the two terms are equal (about
    200-300 on Hopper and Blackwell at their 8-bit peaks): far below peak at a few hundred tokens per
    expert (decode, short prompts), near it only at thousands (prefill of long batches); the higher a
    generation's peak for its bandwidth, the more tokens per expert it needs (issue 32)."""
    return flops / peak + nbytes / bandwidth


def _draft(parts: dict[str, float], q: int, stage: float, decode_share: float) -> float:
    """Speculative drafting (DeepSeek-V3's MTP module, EAGLE): each of the q - 1 draft tokens of a sequence
    runs one transformer layer (and the shared head) on the decoding tokens, about 1 / stage of the
    layers' work for one token per sequence instead of q (DeepSeek-V3 report, 2.2: one MTP module is one
    transformer block sharing embedding and output head)."""
    layers = sum(parts[k] for k in ("dense", "experts", "attention", "tp", "ep") if k in parts)
    return (q - 1) * layers * decode_share / (q * stage)


def _nvlink(s: ServingSetup) -> float:
    return s.network.nvlink_gbs * 1e9 * s.constants.nvlink_efficiency


def _rdma(s: ServingSetup) -> float:
    return s.network.rdma_gbps_per_gpu / 8 * 1e9 * s.constants.fabric_efficiency


def _tp_allreduce(s: ServingSetup, n: float, stage: float) -> float:
    tp = s.shape.tp
    if tp <= 1 or n <= 0:
        return 0.0
    nbytes = n * s.model.hidden * ACT_BYTES
    one = s.constants.allreduce_latency_s + 2 * (tp - 1) / tp * nbytes / _nvlink(s)
    return 2 * stage * one


def _expert_all_to_all(s: ServingSetup, n: float, moe_layers: float, whole: bool = False) -> float:
    """Dispatch (FP8 with an 8-bit weight precision, else 16 bit) and combine (16 bit) of each token to
    its top-k experts, the share on other GPUs of the expert group; NVLink and RDMA legs in parallel.
    Experts sharded by TP only (ep 1) over several attention ranks gather and scatter instead.
    Engines whose expert parallelism under attention DP is an all-gather of every rank's tokens and a
    reduce-scatter of the outputs (TensorRT-LLM, validator/data/serving.yaml `moe_communication`) move
    `g - 1` copies of each rank's tokens instead of `k (g - 1) / g`, in the compute stream: none of it
    is hidden behind another micro-batch (`ep_exposed` is the share two-batch overlap leaves exposed;
    `whole`: the whole time, for the caller to overlap)."""
    sh, m = s.shape, s.model
    if m.moe is None or n <= 0 or not moe_layers:
        return 0.0
    group = sh.ep if sh.ep > 1 else sh.tp * sh.dp
    if group <= 1 or (sh.ep == 1 and sh.dp == 1):
        return 0.0                                   # plain TP experts: inside the TP all-reduces
    dispatch = 1.0 if precision_bytes(s.weight_precision) <= 1 else ACT_BYTES
    gather = sh.ep > 1 and sh.dp > 1 and _engine_setting(s.engine.name, "moe_communication") == "all-gather"
    copies = (group - 1) if gather else (m.moe.top_k if sh.ep > 1 else 1) * (group - 1) / group
    nbytes = n / sh.tp * m.hidden * (dispatch + ACT_BYTES) * copies
    local = min(group, s.network.nvlink_domain)
    on_nvlink = nbytes * (local - 1) / max(group - 1, 1)
    on_rdma = nbytes - on_nvlink
    rdma = _rdma(s)
    t_rdma = on_rdma / rdma if on_rdma > 0 and rdma > 0 else (math.inf if on_rdma > 0 else 0.0)
    per_layer = max(on_nvlink / _nvlink(s), t_rdma) + 2 * s.constants.ep_latency_s
    return moe_layers * per_layer * (1.0 if gather or whole else s.constants.ep_exposed)


def _engine_setting(engine: str, key: str) -> str | None:
    """How an engine runs a kernel class (validator/data/serving.yaml `engines`), None if not stated."""
    entry = serving_defaults().engines.get(engine, {}).get(key)
    return None if entry is None else str(entry.value)


def _pipeline_send(s: ServingSetup, n: float) -> float:
    sh = s.shape
    if sh.pp <= 1 or n <= 0:
        return 0.0
    nbytes = n * s.model.hidden * ACT_BYTES
    inside = sh.gpus <= s.network.nvlink_domain
    bw = _nvlink(s) if inside or not _rdma(s) else _rdma(s)
    return nbytes / bw + s.constants.allreduce_latency_s
