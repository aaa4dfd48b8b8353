"""The published runs of tests/reference/published-runs.csv as estimator inputs, and the figure each
row publishes. Used by tests/test_estimator_accuracy.py and benchmarks/accuracy.py.

Where a row leaves a setting blank, the assumption is written here once, for every row alike:
micro-batch 1 (Narayanan Table 1), no interleaving unless `vpp` is given, fused (flash) attention
for the NeMo 24.07 rows only (the 2021-22 Megatron runs predate it).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import yaml

from validator.derive.estimate.training import TrainingSetup
from validator.resolve.catalog import builtin_catalog
from validator.resolve.catalog.entries import LlmModel

REFERENCE = Path(__file__).resolve().parent / "reference"
CSV = REFERENCE / "published-runs.csv"
NEMO = yaml.safe_load((Path(__file__).resolve().parent / "reference" / "nemo-models.yaml").read_text())
GPU = {"A100-SXM4-80GB": "a100-80gb-sxm", "H100-SXM5-80GB": "h100-sxm", "H200-SXM-141GB": "h200-sxm"}
FABRIC_GBPS = {"a100-80gb-sxm": 200.0, "h100-sxm": 400.0, "h200-sxm": 400.0}   # per GPU, per the CSV
PRECISION = {"fp16 mixed": "fp16", "fp16/bf16 mixed": "bf16", "FP8 (Transformer Engine)": "fp8",
             "FP8 (weights+KV)": "fp8", "FP8": "fp8", "FP16": "fp16"}


@dataclass(frozen=True)
class Row:
    id: str
    kind: str
    source: str
    data: dict[str, str]

    def num(self, key: str) -> float | None:
        v = self.data.get(key, "")
        return float(v) if v not in ("", None) else None

    def int(self, key: str, default: int) -> int:
        v = self.num(key)
        return int(v) if v is not None else default


def rows() -> list[Row]:
    with open(CSV, newline="", encoding="utf-8") as fh:
        return [Row(r["id"], r["kind"], r["source"], r) for r in csv.DictReader(fh)]


def row_model(row: Row) -> LlmModel:
    d = row.data
    shape = NEMO.get(d["model"]) if row.id.startswith("T-NEMO") else None
    if shape is None:
        shape = {"layers": int(d["layers"]), "hidden": int(d["hidden"]), "ffn_hidden": int(d["ffn_hidden"]),
                 "heads": int(d["heads"]), "kv_heads": int(d["kv_heads"] or d["heads"]), "vocab": int(d["vocab"]),
                 "mlp": "swiglu" if "Llama" in d["model"] else "gelu"}
    shape = {k: v for k, v in shape.items() if k != "source"}
    return LlmModel(id=row.id.lower(), name=d["model"], source=row.source, params_b=float(d["params_b"]),
                    max_context=int(d["seq_len"] or 4096), tied_embeddings=False, **shape)


def training_setup(row: Row) -> TrainingSetup:
    d = row.data
    gpu = builtin_catalog().gpu(GPU[d["gpu"]])
    rec = d["recompute"]
    recompute = "full" if rec.startswith("full") else "selective"
    tp, pp, cp = row.int("tp", 1), row.int("pp", 1), row.int("cp", 1)
    n = int(d["num_gpus"])
    return TrainingSetup(
        model=row_model(row), gpu=gpu, gpus=n, tp=tp, pp=pp, dp=row.int("dp", n // (tp * pp * cp)), cp=cp,
        ep=row.int("ep", 1), vpp=row.int("vpp", 1), seq=int(d["seq_len"]), global_batch=int(d["global_batch"]),
        micro_batch=row.int("micro_batch", 1), precision=PRECISION[d["precision"]], recompute=recompute,
        sequence_parallel="sequence parallel" in rec or row.id.startswith("T-NEMO"),
        flash_attention=row.id.startswith("T-NEMO"), zero_stage=1, nvlink_domain=8,
        fabric_gbps_per_gpu=FABRIC_GBPS[gpu.id])


def inference_setup(row: Row):
    """The serving setup, workload and batch of a TensorRT-LLM v0.9 static-batching row."""
    from validator.derive.estimate.engine import EngineSettings, Network, serving_constants
    from validator.derive.estimate.kv import Shape
    from validator.derive.estimate.operating import Workload
    from validator.derive.estimate.step import ServingSetup

    d = row.data
    gpu = builtin_catalog().gpu(GPU[d["gpu"]])
    precision = PRECISION[d["precision"]]
    tp = row.int("tp", 1)
    engine = EngineSettings("trtllm", None, 1 << 30, False, "reserve")
    net = Network(8, 8, gpu.scaleup_bandwidth_gbs / 2, 0.0, 0.0, 0.0, False)
    setup = ServingSetup(row_model(row), gpu, Shape(tp, tp), precision, precision, engine, net,
                         serving_constants(gpu.id))
    return setup, Workload(float(d["isl"]), float(row.int("osl", 1)), 0.0), row.int("infer_batch", 1)


def published_value(row: Row) -> tuple[str, float]:
    """(metric, published value) each row is checked on."""
    if row.id.startswith("T-KOR"):
        return "step_time_s", float(row.num("step_time_s") or 0)
    if row.id.startswith("T-NAR"):
        return "hardware_tflops_per_gpu", float(row.num("tflops_per_gpu") or 0)
    if row.id.startswith("T-NEMO"):
        return "mfu", float(row.num("tflops_per_gpu") or 0) / training_setup(row).gpu.tflops["fp8"]
    if row.num("ttft_ms") is not None:
        return "ttft_ms", float(row.num("ttft_ms") or 0)
    return "output_tokens_per_s_per_gpu", float(row.num("out_tok_s_per_gpu") or 0)


def estimated_value(row: Row, metric: str, constants=None) -> float:
    if row.kind == "training":
        from validator.derive.estimate.training import estimate_training

        return float(getattr(estimate_training(training_setup(row), constants), metric))
    from validator.derive.estimate.operating import static_batch

    setup, workload, batch = inference_setup(row)
    ttft, throughput = static_batch(setup, workload, batch)
    return ttft * 1e3 if metric == "ttft_ms" else throughput


def error(row: Row, constants=None) -> float:
    """Relative error, except MFU rows: absolute error in MFU points (as a fraction)."""
    metric, published = published_value(row)
    est = estimated_value(row, metric, constants)
    return est - published if metric == "mfu" else est / published - 1
