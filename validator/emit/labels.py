"""Human labels and units for the figures of `clusterplan estimate --format json`.

The JSON keeps its stable keys (`mfu`, `memory_per_gpu_gb.total_gb`); a page a person reads shows
"MFU 38.0 %" and "Memory per GPU 36.0 GB". Every figure has a label here; a key that is not listed (a
figure added later) is still shown in words, derived from the key and its unit suffix, never raw.
"""

from __future__ import annotations

import math
from typing import Any

# key -> (label, format). Formats: pct (a fraction shown in %), pct_value (already in %), s, ms, min,
# days, gb, gbps, tflops, tokens, rate (per second), qps, usd, count, bytes, text, ratio.
FIGURES: dict[str, tuple[str, str]] = {
    "step_time_s": ("Step time", "s"),
    "mfu": ("MFU", "pct"),
    "mfu_full_attention": ("MFU counting full attention", "pct"),
    "hfu": ("HFU", "pct"),
    "tokens_per_s": ("Training throughput", "tokens"),
    "tokens_per_s_per_gpu": ("Throughput per GPU", "tokens"),
    "model_tflops_per_gpu": ("Model TFLOP/s per GPU", "tflops"),
    "hardware_tflops_per_gpu": ("Hardware TFLOP/s per GPU", "tflops"),
    "time_to_train_days": ("Time to train", "days"),
    "time_to_train_ideal_days": ("Time to train without interruptions", "days"),
    "comm_share": ("Communication share of the step", "pct"),
    "bubble_fraction": ("Pipeline bubble", "pct"),
    "scaling_efficiency": ("Scaling efficiency", "pct"),
    "goodput": ("Goodput", "pct"),
    "microbatches_per_step": ("Micro-batches per step", "count"),
    "dp_traffic_gb_per_step": ("Data-parallel traffic per GPU per step", "gb"),
    "cost_per_run_usd": ("Cost per run", "usd"),
    "uncertainty_pct": ("Uncertainty", "pct_value"),
    "calibrated": ("Calibrated constants", "text"),
    "memory_per_gpu_gb.total_gb": ("Memory per GPU", "gb"),
    "memory_per_gpu_gb.hbm_gb": ("Memory per GPU: HBM", "gb"),
    "memory_per_gpu_gb.weights_gb": ("Memory per GPU: weights", "gb"),
    "memory_per_gpu_gb.gradients_gb": ("Memory per GPU: gradients", "gb"),
    "memory_per_gpu_gb.optimizer_gb": ("Memory per GPU: optimizer state", "gb"),
    "memory_per_gpu_gb.activations_gb": ("Memory per GPU: activations", "gb"),
    "memory_per_gpu_gb.reserve_gb": ("Memory per GPU: reserve", "gb"),
    "memory_per_gpu_gb.offloaded_gb": ("Memory per GPU: offloaded", "gb"),
    "reliability.checkpoint_blocking_s": ("Checkpoint: blocking time", "s"),
    "reliability.checkpoint_write_s": ("Checkpoint: write time", "s"),
    "reliability.checkpoint_interval_minutes": ("Checkpoint: interval", "min"),
    "reliability.interruptions_per_day": ("Interruptions per day", "ratio"),
    "reliability.restart_minutes": ("Restart time", "min"),
    "ttft_ms": ("Time to first token (p99)", "ms"),
    "ttft_p50_ms": ("Time to first token (p50)", "ms"),
    "tpot_ms": ("Time per output token (p99)", "ms"),
    "tpot_p50_ms": ("Time per output token (p50)", "ms"),
    "replicas_needed": ("Replicas needed", "count"),
    "replicas_planned": ("Replicas planned", "count"),
    "prefill_replicas_needed": ("Prefill replicas needed", "count"),
    "prefill_replicas_planned": ("Prefill replicas planned", "count"),
    "fleet_capacity_qps": ("Fleet capacity", "qps"),
    "target_qps": ("Target load", "qps"),
    "headroom_pct": ("Headroom over the target", "pct_value"),
    "requests_per_s_per_replica": ("Requests per replica", "qps"),
    "output_tokens_per_s_per_gpu": ("Output tokens per GPU", "tokens"),
    "output_tokens_per_s_per_replica": ("Output tokens per replica", "tokens"),
    "total_tokens_per_s_per_gpu": ("Prompt and output tokens per GPU", "tokens"),
    "decode_tokens_per_s_per_gpu": ("Decode tokens per GPU", "tokens"),
    "prefill_tokens_per_s_per_gpu": ("Prefill tokens per GPU", "tokens"),
    "cost_per_million_tokens": ("Cost per million output tokens", "usd"),
    "cost_per_million_total_tokens": ("Cost per million tokens (prompt and output)", "usd"),
    "max_concurrency_per_replica": ("Concurrent requests per replica (KV-limited)", "count"),
    "kv_tokens_per_replica": ("KV-cache tokens per replica", "count"),
    "kv_gb_per_gpu": ("KV cache per GPU", "gb"),
    "kv_bytes_per_token": ("KV cache per token", "bytes"),
    "kv_bytes_per_token_per_gpu": ("KV cache per token per GPU", "bytes"),
    "kv_transfer_gbps": ("KV transfer bandwidth", "gbps"),
    "kv_transfer_ms": ("KV transfer time", "ms"),
    "weights_gb_per_gpu": ("Weights per GPU", "gb"),
    "batch": ("Batch", "count"),
    "batch_limit": ("Batch limited by", "text"),
    "engine": ("Serving engine", "text"),
    "mode": ("Serving mode", "text"),
}

# the estimate card: the figures a reader looks for first, in this order
HEADLINE = {
    "training": ("step_time_s", "mfu", "tokens_per_s", "time_to_train_days", "comm_share",
                 "memory_per_gpu_gb.total_gb", "cost_per_run_usd"),
    "inference": ("ttft_ms", "tpot_ms", "output_tokens_per_s_per_gpu", "replicas_needed", "replicas_planned",
                  "fleet_capacity_qps", "cost_per_million_tokens", "max_concurrency_per_replica"),
}

_SUFFIX_UNITS = (("_pct", "pct_value"), ("_ms", "ms"), ("_s", "s"), ("_minutes", "min"), ("_days", "days"),
                 ("_gbps", "gbps"), ("_gb", "gb"), ("_usd", "usd"), ("_qps", "qps"), ("_tflops", "tflops"))
_SECTION = {"assumptions": "Assumption", "breakdown": "Step time", "memory_per_gpu_gb": "Memory per GPU",
            "reliability": "Reliability", "interval": "Interval"}


def _words(key: str) -> str:
    text = key.replace("_", " ").strip()
    for short, long in (("gpu", "GPU"), ("tflops", "TFLOP/s"), ("kv", "KV"), ("tp", "TP"), ("pp", "PP"),
                        ("dp", "DP"), ("ep", "EP"), ("cp", "CP"), ("nvlink", "NVLink"), ("rdma", "RDMA"),
                        ("gemm", "GEMM"), ("mfu", "MFU"), ("hfu", "HFU"), ("gbps", "Gb/s")):
        text = " ".join(long if w == short else w for w in text.split(" "))
    return text[:1].upper() + text[1:]


def label(key: str) -> tuple[str, str]:
    """(label, format) of a dotted estimate key; keys not listed are put into words from their suffix."""
    if key in FIGURES:
        return FIGURES[key]
    head, _, last = key.rpartition(".")
    fmt = "text"
    for suffix, unit in _SUFFIX_UNITS:
        if last.endswith(suffix):
            last, fmt = last[: -len(suffix)], unit
            break
    if head == "breakdown":
        fmt = "s"
    words = _words(last)
    if head:
        section = _SECTION.get(head.split(".")[0], _words(head.split(".")[0]))
        words = f"{section}: {words[:1].lower()}{words[1:]}" if not words[:2].isupper() else f"{section}: {words}"
    return words, fmt


def _sig(value: float, digits: int = 3) -> str:
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    return f"{value:,.{decimals}f}"


def show(value: Any, fmt: str) -> str:
    """A figure in words and units: 0.38 as "38.0 %", 4.896 s as "4.90 s", None as "unknown"."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) or (fmt == "text" and not isinstance(value, (int, float))):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    v = float(value)
    if not math.isfinite(v):
        return "unknown"
    if fmt == "pct":
        return f"{v * 100:.1f} %"
    if fmt == "pct_value":
        return f"{v:.1f} %"
    if fmt == "usd":
        return f"${v:,.2f}" if abs(v) < 100 else f"${v:,.0f}"
    if fmt == "count":
        return f"{v:,.0f}"
    units = {"s": "s", "ms": "ms", "min": "min", "days": "days", "gb": "GB", "gbps": "Gb/s", "tflops": "TFLOP/s",
             "tokens": "tokens/s", "qps": "requests/s", "bytes": "bytes"}
    text = f"{v:,.0f}" if abs(v) >= 1000 else _sig(v)
    return f"{text} {units[fmt]}" if fmt in units else text


# text values that are themselves identifiers, in words
WORDS = {"batch_limit": {"max_num_seqs": "the engine's limit on concurrent sequences (max-num-seqs)",
                         "kv_cache": "KV-cache capacity"}}


def figure_rows(estimate: dict[str, Any]) -> list[dict[str, Any]]:
    """Every scalar of an estimate's JSON, labelled: [{key, label, text, value}], sorted by label."""
    rows = []
    for key, value in _scalars(estimate):
        name, fmt = label(key)
        text = WORDS.get(key.rpartition(".")[2], {}).get(value, None) if isinstance(value, str) else None
        rows.append({"key": key, "label": name, "text": text or show(value, fmt), "value": value,
                     "number": isinstance(value, (int, float)) and not isinstance(value, bool)})
    return sorted(rows, key=lambda r: (r["key"].count("."), r["label"].lower()))


def _scalars(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k in sorted(data):
        v = data[k]
        if isinstance(v, dict):
            out += _scalars(v, f"{prefix}{k}.")
        elif not isinstance(v, list) or all(isinstance(x, (int, float)) for x in v):
            out.append((f"{prefix}{k}", v))
    return out
