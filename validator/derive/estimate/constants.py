"""The estimator's efficiency constants, from validator/data/efficiency.yaml (one set per GPU type and
precision; GPUs without their own set use `default`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from validator.base.resources import load_data


@dataclass(frozen=True)
class Constants:
    gemm_max: float
    gemm_half_gflop: float
    nvlink_efficiency: float
    fabric_efficiency: float
    nvlink_latency_s: float
    fabric_latency_s: float
    tp_exposed: float
    pp_exposed: float
    dp_overlap: float
    elementwise_factor: float
    decode_memory_efficiency: float
    prefill_efficiency: float
    layer_overhead_s: float
    decode_context_share: float
    source: str


@cache
def constants_for(gpu: str, precision: str) -> Constants:
    data = load_data("efficiency.yaml")
    table = data["gemm"].get(gpu, data["gemm"]["default"])
    gemm = table.get(precision) or data["gemm"]["default"][precision]
    comm = {k: float(v["value"]) for k, v in data["communication"].items()}
    inf_table = data["inference"].get(gpu, data["inference"]["default"])
    inf = inf_table.get(precision) or data["inference"]["default"][precision]
    return Constants(
        gemm_max=float(gemm["max"]), gemm_half_gflop=float(gemm["half_gflop"]),
        nvlink_efficiency=comm["nvlink_efficiency"], fabric_efficiency=comm["fabric_efficiency"],
        nvlink_latency_s=comm["nvlink_latency_us"] / 1e6, fabric_latency_s=comm["fabric_latency_us"] / 1e6,
        tp_exposed=float(gemm["tp_exposed"]), pp_exposed=float(gemm["pp_exposed"]),
        dp_overlap=float(gemm["dp_overlap"]),
        elementwise_factor=float(gemm["elementwise"]),
        decode_memory_efficiency=float(inf["memory"]), prefill_efficiency=float(inf["prefill"]),
        layer_overhead_s=float(inf["layer_overhead_us"]) / 1e6,
        decode_context_share=float(data["decode_context_share"]["value"]),
        source=str(data["source"]),
    )
