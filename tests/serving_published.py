"""The published serving operating points of tests/reference/serving-runs.csv as estimator inputs,
and the figure each row publishes, in one unit per metric. Used by tests/test_serving_published.py
and benchmarks/accuracy_inference.py.

Every assumption a row needs beyond what it publishes is written here once, for all rows alike:
- KV pool: HBM x 0.9 - weights - 3.5 GB per GPU (the design defaults); 16-token blocks.
- Engine limits a source does not state: that engine's defaults in validator/data/serving.yaml.
- KV precision "not stated" with 8- or 4-bit weights on TensorRT-LLM: FP8 (the ModelOpt checkpoints'
  default); otherwise the precision the row states, else BF16.
- Networks: 8-GPU NVLink domains (72 on GB200 NVL72) and one 400 Gb/s RDMA link per GPU.
Rows that cannot be reproduced from what is published are listed in SKIPPED with the reason.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path

from validator.derive.estimate.burst import burst
from validator.derive.estimate.engine import EngineSettings, Network, serving_constants
from validator.derive.estimate.kv import Shape, kv_bytes_per_token_per_gpu, weight_bytes_per_gpu
from validator.derive.estimate.operating import Workload, decode_rate, max_load, prefill_rate
from validator.derive.estimate.queueing import aggregated, closed_loop
from validator.derive.estimate.step import ServingSetup
from validator.resolve.catalog import builtin_catalog
from validator.resolve.catalog.entries import Gpu

CSV = Path(__file__).resolve().parent / "reference" / "serving-runs.csv"
UTILIZATION, RESERVE_GB = 0.9, 3.5

MODELS = {"DeepSeek": "deepseek-v3", "Llama-3.3-70B": "llama3-70b", "Llama-3-70B": "llama3-70b",
          "Llama-3.1-8B": "llama3-8b", "Llama-3-8B": "llama3-8b", "Llama-3.1-405B": "llama3-405b",
          "Llama-2-70B": "llama2-70b", "Mixtral": "mixtral-8x7b", "Qwen3-235B": "qwen3-235b-a22b"}
GPUS = {"H100": "h100-sxm", "H200": "h200-sxm", "B200": "b200", "GB200": "gb200", "H800": "h800-sxm"}

# rows the fit may see; every other reproduced row is held out (docs/estimator.md)
IN_SAMPLE = ("S-TRT10-", "S-TRTNEW-B200-DSR1-", "S-SGL-H100-DSV3-PREFILL-EP32-1000",
             "S-SGL-H100-DSV3-PREFILL-EP32-4000", "S-SGL-H100-DSV3-DECODE-EP72-2000")

SKIPPED = {
    "S-MLP": "the mean prompt length of MLPerf's OpenOrca subset is not in the material read (only its mean "
             "output, 294.45 tokens); TTFT and throughput depend on it",
    "S-TRTDS-B200-DSR1-TP8EP2-MINLAT": "batch-1 speed with MTP at an unpublished acceptance rate",
    "S-TRTDS-H200-DSR1-TP8EP4-MINLAT": "batch-1 speed with MTP at an unpublished acceptance rate",
    "S-DS-": "production averages over a day of varying load, prompt-length mix not published",
    "S-SGL-H800-DSV3": "SGLang's estimate from DeepSeek's profiler traces, not a measurement",
    "S-SGL-H100-DSV3-PREFILL-EP32-4096-PERFECTEPLB": "simulated perfect expert balance",
    "S-SGL-H100-DSV3-DECODE-EP72-SIMMTP": "simulated MTP (batch doubled, attention slowed to match)",
    "S-SGL-H100-DSV3-DECODE-ITL": "approximate ITL ('about 100 ms'), load not stated",
    "S-VV1-": "latency statistic not defined and arrival process not stated",
    "S-V06-H100-L8-SGPT-TPOT-INF": "500 requests sent at once: a draining burst, not a steady state",
    "S-V06-H100-L8-SGPT-TTFT-INF": "500 requests sent at once: a draining burst, not a steady state",
    "S-V06-H100-L70-SGPT-TPOT-INF": "500 requests sent at once: a draining burst, not a steady state",
    "S-V06-H100-L70-SGPT-TTFT-INF": "500 requests sent at once: a draining burst, not a steady state",
    "S-V06-H100-L70-SGPT-TPOT-QPS32": "32 QPS is above the replica's measured maximum (17.4 req/s): a finite "
                                      "run of a growing queue",
    "S-V06-H100-L70-DEC-TPOT-QPS32": "32 QPS is twice the replica's measured maximum (15.4 req/s): a finite "
                                     "run of a growing queue",
    "S-V06-H100-L70-DEC-TTFT-QPS32": "32 QPS is twice the replica's measured maximum (15.4 req/s): a finite "
                                     "run of a growing queue",
}


@dataclass(frozen=True)
class Case:
    id: str
    source: str
    metric: str           # out_tok_s_gpu | in_tok_s_gpu | req_s | tpot_ms | ttft_ms
    published: float
    setup: ServingSetup
    workload: Workload
    kind: str             # aggregated | prefill | decode | load (TPOT at a rate) | ttft (TTFT at a rate)
    #                       | burst (requests/s of `requests` sent at once, over the makespan)
    #                       | closed (output tokens/s of a closed loop of `clients` users)
    batch: float | None = None        # decode: sequences per rank as published
    clients: float | None = None      # closed: concurrent users of the closed loop
    requests: int | None = None       # burst: requests sent at once (throughput over the makespan)
    lengths: str = "exponential"      # burst: output-length distribution (burst.DISTRIBUTIONS)
    qps: float | None = None          # load: requests/s of the replica
    prefill_tokens: float | None = None

    @property
    def split(self) -> str:
        return "in-sample" if self.id.startswith(IN_SAMPLE) else "held-out"

    @property
    def family(self) -> str:
        return self.id.split("-")[1]


def skipped(row_id: str) -> str | None:
    return next((why for key, why in SKIPPED.items() if row_id.startswith(key)), None)


def _gpu(name: str) -> Gpu:
    key = next(k for k in ("GB200", "B200", "H100", "H200", "H800") if name.startswith(k))
    if key == "H800":   # an H100 with its NVLink cut to 400 GB/s (NVIDIA H800 product brief)
        return builtin_catalog().gpu("h100-sxm").model_copy(update={"id": "h800-sxm", "scaleup_bandwidth_gbs": 400})
    return builtin_catalog().gpu(GPUS[key])


def _precision(text: str) -> str:
    t = text.upper()
    return "fp4" if "FP4" in t else "fp8" if "FP8" in t else "bf16"


def _kv_precision(row: dict[str, str], weights: str) -> str:
    t = row["precision_kv"].upper()
    if t.startswith("FP8") or "DTYPE FP8" in t:
        return "fp8"
    if t.startswith(("BF16", "FP16")) or "BF16" in t:
        return "bf16"
    return "fp8" if weights in ("fp8", "fp4") and row["engine"].startswith("TensorRT") else "bf16"


def _int(text: str) -> int | None:
    digits = "".join(ch for ch in text.split("(")[0] if ch.isdigit())
    return int(digits) if digits else None


def _engine(row: dict[str, str], gpu: Gpu) -> EngineSettings:
    eng = row["engine"]
    if eng.startswith("TensorRT"):
        seqs, budget, chunked, admission = 2048, 8192, True, "reserve"
        note = row["concurrency_or_batch"]
        if "max_batch_size" in note:
            seqs = int(note.split("max_batch_size ")[1].split()[0])
            budget = int(row["max_num_tokens"])
        return EngineSettings("trtllm", seqs, budget, chunked, admission)
    if eng.startswith("SGLang"):
        return EngineSettings("sglang", None, 16384, False, "average")
    if row["id"].startswith("S-V06"):   # vLLM v0.6.0: V0 scheduler, no chunking, 256 sequences, 8192 tokens
        return EngineSettings("vllm", 256, 8192, False, "average")
    return EngineSettings("vllm", 1024, 8192, True, "average")


def _shape(row: dict[str, str]) -> Shape:
    n = int(row["num_gpus"])
    tp = _int(row["tp"]) or 1
    ep = _int(row["ep"]) or 1
    dp = n // tp if row["dp_attention"] == "yes" else 1
    if row["dp_attention"] == "yes" and row["engine"].startswith("TensorRT"):
        tp, dp = 1, n       # trtllm-bench --tp equals the DEP group size
    return Shape(n, tp, 1, ep, dp)


def setup_of(row: dict[str, str]) -> ServingSetup:
    gpu = _gpu(row["gpu"])
    model = builtin_catalog().model(next(v for k, v in MODELS.items() if row["model"].startswith(k)))
    weights = _precision(row["precision_weights"])
    shape = _shape(row)
    domain = 72 if gpu.id == "gb200" else 8
    net = Network(domain, 4 if gpu.id == "gb200" else 8, gpu.scaleup_bandwidth_gbs / 2, 400.0, 400.0, 1.0, True)
    return ServingSetup(model, gpu, shape, weights, _kv_precision(row, weights), _engine(row, gpu), net,
                        serving_constants(gpu.id))


def kv_tokens_rank(s: ServingSetup) -> float:
    weights = weight_bytes_per_gpu(s.model, s.weight_precision, s.shape) / 1e9
    free = max(0.0, s.gpu.memory_gb * UTILIZATION - weights - RESERVE_GB) * 1e9
    per = kv_bytes_per_token_per_gpu(s.model, s.kv_precision, s.shape.tp, s.shape.pp)
    return math.floor(free / per / 16) * 16


def _mean(text: str) -> float | None:
    for word in text.replace("~", " ").replace("(", " ").split():
        if word.replace(".", "").isdigit():
            return float(word)
    return None


def _per_gpu(row: dict[str, str], value: float) -> float:
    unit = row["unit"]
    if "node" in unit:
        return value / 8
    if "instance" in unit:
        return value / int(row["num_gpus"])
    return value


def case_of(row: dict[str, str]) -> Case | None:
    if skipped(row["id"]):
        return None
    s = setup_of(row)
    prompt = _mean(row["isl"]) or 0.0
    output = _mean(row["osl"]) if row["osl"][:1].isdigit() or "mean" in row["osl"] or "~" in row["osl"] else None
    value = float(row["value"])
    metric, mode = row["metric"], row["mode"]
    base = {"id": row["id"], "source": row["source"], "setup": s}
    if mode == "disaggregated-prefill":
        w = Workload(prompt, 1, kv_tokens_rank(s))
        tokens = 16384.0 if "16,384" in row["concurrency_or_batch"] else None
        return Case(**base, metric="in_tok_s_gpu", published=_per_gpu(row, value), workload=w, kind="prefill",
                    prefill_tokens=tokens)
    if mode == "disaggregated-decode":
        batch = _int(row["concurrency_or_batch"])
        out = output if output and output > 1 else 0.0
        w = Workload(prompt, out, kv_tokens_rank(s))
        return Case(**base, metric="out_tok_s_gpu", published=_per_gpu(row, value), workload=w, kind="decode",
                    batch=float(batch) if batch else None)
    w = Workload(prompt, output or 1.0, kv_tokens_rank(s))
    sent = re.search(r"\((\d+) requests at once\)", row["concurrency_or_batch"])
    if metric == "request_throughput" and sent:
        # a burst run to its end (benchmark_serving at QPS inf): a dataset's varying output lengths (a
        # mean is all the row states) drain as exponential, a fixed-length dataset (sonnet) in waves
        lengths = "exponential" if row["osl"].startswith("mean") else "fixed"
        return Case(**base, metric="req_s", published=value, workload=w, kind="burst", requests=int(sent[1]),
                    lengths=lengths)
    if metric == "request_throughput":
        return Case(**base, metric="req_s", published=value, workload=w, kind="aggregated")
    if metric.startswith("ttft_ms") and (rate := re.search(r"([0-9.]+) req/s", row["concurrency_or_batch"])):
        # the request rate the source measured (closed loops: completions/s); the model's median TTFT at it
        return Case(**base, metric="ttft_ms", published=value, workload=w, kind="ttft", qps=float(rate[1]))
    if metric.startswith(("tpot_ms", "itl_ms")):
        # the rate the source measured (closed loops: completions/s), else its Poisson rate; the model's median
        rate = re.search(r"([0-9.]+) req/s", row["concurrency_or_batch"])
        qps = float(rate[1]) if rate else float(row["concurrency_or_batch"].split()[1])
        return Case(**base, metric="tpot_ms", published=value, workload=w, kind="load", qps=qps)
    if mode == "closed-loop":
        return Case(**base, metric="out_tok_s_gpu", published=_per_gpu(row, value), workload=w, kind="closed",
                    clients=float(_int(row["concurrency_or_batch"]) or 0))
    if metric in ("output_tok_s_per_gpu", "output_tok_s_total"):
        return Case(**base, metric="out_tok_s_gpu", published=_per_gpu(row, value), workload=w, kind="aggregated")
    return None


def cases() -> list[Case]:
    with open(CSV, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [c for c in (case_of(r) for r in rows) if c is not None]


def estimate(case: Case, setup: ServingSetup | None = None) -> float:
    s = setup or case.setup
    w = case.workload
    if case.kind == "prefill":
        rate, _ = prefill_rate(s, w, case.prefill_tokens)
        return rate / s.shape.gpus
    if case.kind == "decode":
        if case.batch is None:
            return decode_rate(s, w).output_tokens_per_s / s.shape.gpus
        if not w.output:   # decode rows that publish the KV length, not the output length
            w = dataclasses.replace(w, output=0.0)
        return decode_rate(s, w, case.batch).output_tokens_per_s / s.shape.gpus
    if case.kind == "closed":
        loop = closed_loop(s, w, case.clients or 0.0)
        return loop[0] * w.output / s.shape.gpus if loop else 0.0
    if case.kind == "burst":
        return burst(s, w, case.requests or 1, case.lengths).requests_per_s
    if case.kind in ("load", "ttft"):
        lat = aggregated(s, w, case.qps or 0.0)
        if lat is None:
            return math.inf
        return (lat.ttft_p50_s if case.kind == "ttft" else lat.tpot_p50_s) * 1e3
    point = max_load(s, w)
    return point.requests_per_s if case.metric == "req_s" else point.output_tokens_per_s / s.shape.gpus


def error(case: Case, setup: ServingSetup | None = None) -> float:
    return estimate(case, setup) / case.published - 1
