"""The `clusterplan estimate` scorecard: the headline, the step as a bar, and the assumptions."""

from __future__ import annotations

import textwrap
from typing import Any

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
             f"  step {e['step_time_s']:.3g} s +/- {e['uncertainty_pct']:.0f}% ({calibrated})"]
    bar, legend = _bar(e["breakdown"])
    lines.append(f"    [{bar}]")
    lines.append(f"    {legend}")
    lines.append(f"  communication {100 * e['comm_share']:.0f}% of the step, scaling efficiency "
                 f"{100 * e['scaling_efficiency']:.0f}%, {e['microbatches_per_step']} micro-batches per step, "
                 f"pipeline layers {e['pipeline_layers']}, DP traffic {e['dp_traffic_gb_per_step']:,.3g} GB/step "
                 "per GPU")
    good = e["goodput"]
    ideal = _days(e["time_to_train_ideal_days"], "no token budget")
    real = _days(e["time_to_train_days"], "no token budget" if e["time_to_train_ideal_days"] is None
                 else "no storage write bandwidth")
    cost = e["cost_per_run_usd"]
    lines.append(f"  time to train {real} at goodput {'n/a' if good is None else f'{100 * good:.1f}%'} "
                 f"(ideal {ideal}); cost per run {'n/a' if cost is None else f'${cost:,.0f}'}")
    rel = e["reliability"]
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


def scorecard(e: dict[str, Any]) -> str:
    lines = [f"{e['name']} ({e['kind']})  {e['file']}"]
    if e["kind"] == "training":
        lines += _training(e)
    else:
        cost = e["cost_per_million_tokens"]
        lines.append(f"  TTFT {e['ttft_ms']:,.0f} ms   TPOT {e['tpot_ms']:.1f} ms   "
                     f"{e['output_tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU at batch {e['batch']}")
        lines.append(f"  KV cache {e['kv_bytes_per_token']:,.0f} B/token ({e['kv_bytes_per_token_per_gpu']:,.0f} per "
                     f"GPU), {e['kv_gb_per_gpu']:.1f} GB per GPU -> max {e['max_concurrency_per_replica']} concurrent "
                     f"requests per replica")
        lines.append(f"  replicas needed {_fmt(e['replicas_needed'], 'd')} (planned {e['replicas_planned']}), "
                     f"{e['requests_per_s_per_replica']:.3g} requests/s per replica, cost per million output "
                     f"tokens {'n/a (no server price)' if cost is None else f'${cost:.3f}'}")
    items = ", ".join(f"{k}={v}" for k, v in sorted(e["assumptions"].items()))
    lines.append(textwrap.fill(items, width=110, initial_indent="  assumptions: ", subsequent_indent="    "))
    return "\n".join(lines) + "\n"
