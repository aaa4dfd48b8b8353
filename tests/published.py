"""The published inference runs of tests/reference/published-runs.csv as estimator inputs, and the figure
each row publishes. Used by tests/test_estimator.py and benchmarks/accuracy.py. The training rows (of
this file and of training-runs.csv) are read by tests/training_runs.py.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import yaml

from validator.resolve.catalog import builtin_catalog
from validator.resolve.catalog.entries import LlmModel

REFERENCE = Path(__file__).resolve().parent / "reference"
CSV = REFERENCE / "published-runs.csv"
NEMO = yaml.safe_load((Path(__file__).resolve().parent / "reference" / "nemo-models.yaml").read_text())
GPU = {"A100-SXM4-80GB": "a100-80gb-sxm", "H100-SXM5-80GB": "h100-sxm", "H200-SXM-141GB": "h200-sxm"}
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
    """The inference rows (training rows: tests/training_runs.py)."""
    with open(CSV, newline="", encoding="utf-8") as fh:
        return [Row(r["id"], r["kind"], r["source"], r) for r in csv.DictReader(fh) if r["kind"] == "inference"]


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
    if row.num("ttft_ms") is not None:
        return "ttft_ms", float(row.num("ttft_ms") or 0)
    return "output_tokens_per_s_per_gpu", float(row.num("out_tok_s_per_gpu") or 0)


def estimated_value(row: Row, metric: str, constants=None) -> float:
    from validator.derive.estimate.operating import static_batch

    setup, workload, batch = inference_setup(row)
    ttft, throughput = static_batch(setup, workload, batch)
    return ttft * 1e3 if metric == "ttft_ms" else throughput


def error(row: Row, constants=None) -> float:
    """Relative error."""
    metric, published = published_value(row)
    return estimated_value(row, metric, constants) / published - 1
