"""The `clusterplan estimate` scorecard: the headline, the step as a bar, and the assumptions."""

from __future__ import annotations

import textwrap
from typing import Any

from validator.base.findings import Finding

_BAR = 40
_MARKS = {"compute": "#", "recompute": "r", "tp": "t", "cp": "c", "ep": "e", "pp": "p", "dp": "d", "bubble": ".",
          "optimizer": "o", "offload": "h", "straggler": "s"}


def _bar(parts: dict[str, float]) -> tuple[str, str]:
    total = sum(parts.values()) or 1.0
    bar = ""
    legend = []
    for key, value in parts.items():
        if value <= 0:
            continue
        bar += _MARKS[key] * round(_BAR * value / total)
        legend.append(f"{_MARKS[key]} {key} {100 * value / total:.0f}%")
    return bar[:_BAR].ljust(_BAR), "  ".join(legend)


def _fmt(x: Any, spec: str = ",.3g") -> str:
    return "n/a" if x is None else format(x, spec)


def _days(x: float | None, why: str) -> str:
    return f"n/a ({why})" if x is None else f"{x:,.1f} days"


def _training(e: dict[str, Any]) -> list[str]:
    calibrated = "calibrated" if e["calibrated"] else "UNCALIBRATED for this GPU/precision"
    lines = [f"  MFU {100 * e['mfu']:.1f}% (causal attention; {100 * e['mfu_full_attention']:.1f}% counting full "
             f"s^2)   HFU {100 * e['hfu']:.1f}%   {e['model_tflops_per_gpu']:,.0f} model TFLOP/s per GPU   "
             f"{e['tokens_per_s']:,.0f} tokens/s",
             f"  step {e['step_time_s']:.3g} s ({calibrated})"]
    bar, legend = _bar(e["breakdown"])
    lines.append(f"    [{bar}]")
    lines.append(f"    {legend}")
    lines.append(f"  communication {100 * e['comm_share']:.0f}% of the step, scaling efficiency "
                 f"{100 * e['scaling_efficiency']:.0f}%, {e['microbatches_per_step']} micro-batches per step, "
                 f"pipeline layers {e['pipeline_layers']}, DP traffic {e['dp_traffic_gb_per_step']:,.3g} GB/step "
                 "per GPU")
    good = e["goodput"]
    ideal = _days(e["time_to_train_ideal_days"], "no token budget")
    missing = e["assumptions"].get("time_to_train", "")
    real = _days(e["time_to_train_days"], missing.removeprefix("not computed: ") or "unknown")
    cost = e["cost_per_run_usd"]
    lines.append(f"  time to train {real} at goodput {'n/a' if good is None else f'{100 * good:.1f}%'} "
                 f"(ideal {ideal}); cost per run {'n/a' if cost is None else f'${cost:,.0f}'}")
    rel = e["reliability"]
    if e["assumptions"].get("checkpoint_storage"):
        lines.append(f"    assumed: {e['assumptions']['checkpoint_storage']}")
    if rel:
        lines.append(f"    {rel['interruptions_per_day']:.2g} interruptions/day, checkpoint write "
                     f"{rel['checkpoint_write_s']:,.0f} s every {rel['checkpoint_interval_minutes']:,.0f} min, "
                     f"restart {rel['restart_minutes']:,.0f} min")
    m = e["memory_per_gpu_gb"]
    lines.append(f"  memory per GPU {m['total_gb']:.1f} of {m['hbm_gb']:g} GB (weights {m['weights_gb']:.1f}, "
                 f"gradients {m['gradients_gb']:.1f}, optimizer {m['optimizer_gb']:.1f}, activations "
                 f"{m['activations_gb']:.1f}, reserve {m['reserve_gb']:.1f}"
                 + (f"; {m['offloaded_gb']:.1f} offloaded to host" if m["offloaded_gb"] else "") + ")")
    return lines


def validity(findings: list[Finding]) -> dict[str, Any]:
    """`valid` and the blocking findings (unwaived errors) of the design an estimate is of: its figures are
    those of a configuration that cannot run as written when any rule blocks it (weights that do not fit,
    an overloaded pool, ...)."""
    blocking = [f for f in findings if f.severity == "error" and not f.waived]
    return {"valid": not blocking,
            "blocked_by": [{"rule": f.rule, "line": f.line, "message": f.message} for f in blocking]}


def _banner(e: dict[str, Any]) -> list[str]:
    if e.get("valid", True):
        return []
    rules = ", ".join(sorted({b["rule"] for b in e["blocked_by"]}))
    return [f"  NOT VALID: the design fails {rules}; every figure below is of a configuration that cannot run "
            "as written (clusterplan validate says why)"]


def scorecard(e: dict[str, Any]) -> str:
    lines = [f"{e['name']} ({e['kind']})  {e['file']}", *_banner(e)]
    if e["kind"] == "training":
        lines += _training(e)
    else:
        lines += _inference(e)
    lines += _trust(e.get("trust"))
    items = ", ".join(f"{k}={v}" for k, v in sorted(e["assumptions"].items()))
    lines.append(textwrap.fill(items, width=110, initial_indent="  assumptions: ", subsequent_indent="    "))
    lines += _banner(e)
    return "\n".join(lines) + "\n"


_LABELS = {"step_time_s": ("step time", " s"), "mfu": ("MFU", ""), "tokens_per_s": ("tokens/s", ""),
           "output_tokens_per_s_per_gpu": ("output tokens/s per GPU", ""),
           "total_tokens_per_s_per_gpu": ("input + output tokens/s per GPU", ""),
           "requests_per_s_per_replica": ("requests/s per replica", ""),
           "fleet_capacity_qps": ("fleet capacity, requests/s", ""), "ttft_ms": ("TTFT p99", " ms"),
           "ttft_p50_ms": ("TTFT p50", " ms"), "tpot_ms": ("TPOT p99", " ms"), "tpot_p50_ms": ("TPOT p50", " ms")}


def _figure(key: str, x: float) -> str:
    return f"{100 * x:.1f}%" if key == "mfu" else f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _trust(t: dict[str, Any] | None) -> list[str]:
    """The interval of each headline figure and what lies outside the fitted runs."""
    if not t:
        return []
    parts = []
    for key, (low, high) in t["intervals"].items():
        label, unit = _LABELS.get(key, (key, ""))
        parts.append(f"{label} {_figure(key, low)}-{_figure(key, high)}{unit}")
    lines = [textwrap.fill("; ".join(parts), width=110, initial_indent="  likely range: ",
                           subsequent_indent="    "),
             textwrap.fill(t["basis"], width=110, initial_indent="    (", subsequent_indent="     ") + ")"]
    for why in t["outside_fit"]:
        lines.append(f"  OUTSIDE THE FITTED RUNS: {why}")
    return lines


def _ms(x: Any) -> str:
    return "n/a (overloaded)" if x is None else f"{x:,.1f} ms"


def _inference(e: dict[str, Any]) -> list[str]:
    cost = e["cost_per_million_tokens"]
    load = f"at {e['target_qps']:.4g} requests/s" if e["target_qps"] else "at light load (no target load)"
    split = e["mode"] == "disaggregated"
    replica = "decode replica" if split else "replica"
    lines = [
        f"  {e['mode']} serving on {e['engine']}; full load, every request's prefill included:",
        f"    output tokens/s per GPU {e['output_tokens_per_s_per_gpu']:,.0f}   input + output tokens/s per GPU "
        f"{e['total_tokens_per_s_per_gpu']:,.0f}"
        + (" (prefill and decode GPUs in the balanced ratio)" if split else ""),
        f"    output tokens/s per {replica} {e['output_tokens_per_s_per_replica']:,.0f}   "
        f"{e['requests_per_s_per_replica']:.4g} requests/s per {replica}",
        f"    batch {e['batch']} sequences per {replica} at the average request length (capped by {e['batch_limit']})"
        + (f"   prefill pool {e['prefill_tokens_per_s_per_gpu']:,.0f} prompt tokens/s per GPU"
           if e["prefill_tokens_per_s_per_gpu"] is not None else "")
        + (f", decode pool {e['decode_tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU"
           if e["decode_tokens_per_s_per_gpu"] is not None else ""),
        f"  latency {load}: TTFT p50 {_ms(e['ttft_p50_ms'])}, p99 {_ms(e['ttft_ms'])}   TPOT p50 "
        f"{_ms(e['tpot_p50_ms'])}, p99 {_ms(e['tpot_ms'])}"
        + (f"   KV transfer {e['kv_transfer_ms']:.2f} ms" if e["kv_transfer_ms"] is not None else ""),
        f"  KV cache {e['kv_bytes_per_token']:,} B/token ({e['kv_bytes_per_token_per_gpu']:,} B per GPU), "
        f"{e['kv_gb_per_gpu']:.1f} GB per GPU -> {e['max_concurrency_per_replica']} requests per {replica} "
        "guaranteed their full context",
    ]
    needed = _fmt(e["replicas_needed"], "d")
    if e["prefill_replicas_needed"] is not None or e["prefill_replicas_planned"] is not None:
        needed = f"prefill {_fmt(e['prefill_replicas_needed'], 'd')} (planned {e['prefill_replicas_planned']}), " \
                 f"decode {needed}"
    head = "" if e["headroom_pct"] is None else f", headroom {e['headroom_pct']:+.0f}% over the target"
    lines.append(f"  replicas needed {needed} (planned {e['replicas_planned']}); fleet capacity at the SLOs "
                 f"{e['fleet_capacity_qps']:.4g} requests/s{head}")
    unknown = "n/a (a BOM line unpriced or a power unknown)"
    lines.append("  cost per million output tokens " + (unknown if cost is None else f"${cost:.3f}")
                 + ("" if e["cost_per_million_total_tokens"] is None else
                    f", per million input + output tokens ${e['cost_per_million_total_tokens']:.3f}"))
    return lines


def inference_headline(e: dict[str, Any]) -> str:
    """One line for a summary (PR comment, workbook): throughput per GPU, what the fleet carries at its
    SLOs against the target, cost per million output tokens."""
    cost = e["cost_per_million_tokens"]
    fleet = "" if e["fleet_capacity_qps"] is None else f", fleet {e['fleet_capacity_qps']:.4g} requests/s at the SLOs"
    target = "" if e["target_qps"] is None else f" for a target of {e['target_qps']:.4g}"
    return (f"{e['output_tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU{fleet}{target}, "
            + ("cost per million output tokens unknown" if cost is None else f"${cost:.3f} per million output tokens"))
