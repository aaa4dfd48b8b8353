"""The published training runs (tests/reference/training-runs.csv and the training rows of
published-runs.csv) as estimator inputs, each with the step time it publishes and its source family.

Every row is compared on step time. Where a source publishes only TFLOP/s (or MFU), its own FLOP
convention turns it back into a step time (`CONVENTION`), so no comparison mixes conventions. Where a
row leaves a setting blank, the assumption is written here once, for every row of a family alike:
micro-batch 1; fused (flash) attention and sequence parallelism except in the 2021-22 Megatron runs,
BLOOM and MT-NLG; recomputation blank = none (a recipe that recomputes usually says so); NeMo and
Megatron-Bridge gradients reduced in fp32 (their mixed-precision recipes), LLM Foundry's
`mixed_precision=DEFAULT` too; the rest in FAMILY_DEFAULTS, LEGACY_DP, ASSUMED_VPP and _tp_overlap.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import yaml

from validator.derive.estimate.setup import Sharding, TrainingSetup, reference_fabric
from validator.read.model import Training
from validator.resolve.catalog import builtin_catalog
from validator.resolve.catalog.entries import Gpu, LlmModel, Mla, Moe

REFERENCE = Path(__file__).resolve().parent / "reference"
FILES = (REFERENCE / "published-runs.csv", REFERENCE / "training-runs.csv")
SHAPES = yaml.safe_load((REFERENCE / "training-models.yaml").read_text())
NEMO_SHAPES = yaml.safe_load((REFERENCE / "nemo-models.yaml").read_text())

FAMILIES = {  # id prefix -> (family, what it is)
    "T-KOR5": ("korthikanti", "Korthikanti et al. 2022 Table 5, A100, step time"),
    "T-NAR1": ("narayanan", "Narayanan et al. 2021 Table 1, A100, TFLOP/s (recompute-inclusive)"),
    "T-NEMO-": ("nemo-24.07", "NeMo 24.07 performance table, H100 FP8, tokens/s"),
    "T-MB": ("megatron-bridge", "Megatron-Bridge 25.09-26.08 tables, H100/B200/B300/GB200/GB300, tokens/s"),
    "T-NEMO25": ("nemo-25", "NeMo 25.02-25.07 tables, H100/B200/GB200 FP8, tokens/s"),
    "T-NEMOLS": ("nemo-long-context", "NeMo long-sequence CP tables, H100/B200 FP8, 4K-1M tokens, TFLOP/s"),
    "T-MLM": ("megatron-lm", "Megatron-LM README scaling, H100 BF16, 48-6144 GPUs, TFLOP/s / MFU"),
    "T-LLAMA3": ("llama3", "Llama 3 paper Table 4, H100 BF16, 8K-16K GPUs, TFLOP/s"),
    "T-MEGASCALE": ("megascale", "MegaScale Table 2 (Megatron-LM baseline), A100, 256-12288 GPUs, step time"),
    "T-TTITAN": ("torchtitan", "torchtitan benchmarks, FSDP2/HSDP/TP/CP, H100 (500 W) / A100 / H200, tokens/s"),
    "T-AUTOMODEL": ("automodel", "NeMo AutoModel, FSDP2 + EP, H100 BF16, step time"),
    "T-LLMF": ("llm-foundry", "LLM Foundry MPT tables, FSDP, A100/H100, tokens/s"),
    "T-BLOOM": ("historical", "BLOOM-176B and MT-NLG 530B, A100, step time"),
    "T-MTNLG": ("historical", "BLOOM-176B and MT-NLG 530B, A100, step time"),
    "T-KFORGE": ("kempnerforge", "KempnerForge weak scaling, FSDP2 x TP4, H200 BF16, 8-160 GPUs, step time"),
}
# Sources added after the model's terms were set: never in a fit (calibrate.py, the leave-one-out refits),
# their error is held out whatever the constants (issue 32: new sources enter as held-out only)
HELD_OUT_ONLY = ("kempnerforge",)
# NVLink domain and GPUs per server of families whose servers are not 8-GPU HGX boards
SERVER_GPUS = {"kempnerforge": 4}
EXCLUDED = {  # id prefix -> why it is not compared
    "T-OPT": "'up to 147 TFLOP/s' is a peak, and the batch, TP degree and FLOP convention are not stated",
    "T-DSV3": "a whole-run average over 14.8T tokens (failures, evaluation, batch ramp), not a step time",
    "T-KFORGE-H200BF16-70B-8": "memory-bound at 128.5 of 141 GB per GPU (the source leaves it out of its own "
                               "scaling baseline); allocator behaviour near a full HBM is not modelled",
    "T-MEGASCALE-T2-MS": "MegaScale's modified model (parallel block, sliding-window attention, LAMB) is not "
                         "expressible in the model format",
}
# FLOP conventions of the sources that publish TFLOP/s only (per step, B sequences of s tokens)
CONVENTION = {
    "narayanan": "96 B s l h^2 (1 + s/6h + V/16lh): recompute-inclusive (Narayanan eq. 3)",
    "megatron-lm": "72 B s l h^2 (1 + s/6h + V/12lh): model FLOPs, full s^2 (Korthikanti)",
    "nemo-long-context": "NeMo FLOPs callback of the 24.03/25.04 containers: matmuls, full s^2, logits",
    "llama3": "PaLM: (6 N + 12 l h s) per token, N = all parameters",
    "kempnerforge": "(6 (N - V h) + 12 l h s) per token: N less the input embedding (reproduces its MFU and tokens/s)",
}

GB300 = Gpu(id="gb300", name="NVIDIA GB300 (per GPU, NVL72)", vendor="nvidia", form_factor="superchip",
            memory_gb=279, memory_type="HBM3e", memory_bandwidth_tbs=8.0,
            tflops={"bf16": 2500, "fp16": 2500, "fp8": 5000, "fp4": 15000}, tdp_w=1400,
            scaleup_bandwidth_gbs=1800, scaleup_domain_max=72,
            source="shared/docs/hardware-notes.md section 3 (Blackwell Ultra datasheet copy)")


def _variant(base: str, **changes: object) -> Gpu:
    return builtin_catalog().gpu(base).model_copy(update=changes)


@cache
def gpus() -> dict[str, Gpu]:
    return {
        "a100-40gb-sxm": _variant("a100-80gb-sxm", id="a100-40gb-sxm", memory_gb=40, memory_bandwidth_tbs=1.555),
        # Meta Grand Teton H100 with 96 GB HBM2e at a 500 W limit (torchtitan): bandwidth not published,
        # six HBM2e stacks at ~0.4 TB/s [D]
        "h100-96gb-500w": _variant("h100-sxm", id="h100-96gb-500w", memory_gb=96, memory_bandwidth_tbs=2.4,
                                   tdp_w=500),
        "gb300": GB300,
    }


def gpu_of(text: str) -> Gpu:
    t = text.upper()
    local = gpus()
    if t.startswith("A100-SXM4-40GB"):
        return local["a100-40gb-sxm"]
    if t.startswith("A100"):
        return builtin_catalog().gpu("a100-80gb-sxm")
    if t.startswith("H100-SXM-9"):
        return local["h100-96gb-500w"]
    if t.startswith("H800"):
        return builtin_catalog().gpu("h800-sxm")
    for prefix, gid in (("H100", "h100-sxm"), ("H200", "h200-sxm"), ("GB300", "gb300"), ("GB200", "gb200"),
                        ("B300", "b300"), ("B200", "b200")):
        if t.startswith(prefix):
            return local[gid] if gid in local else builtin_catalog().gpu(gid)
    raise KeyError(text)


def precision_of(text: str) -> str:
    t = text.lower()
    if "fp4" in t:
        return "fp4"
    if "fp8" in t or "float8" in t:
        return "fp8"
    if "fp16" in t and "bf16" not in t:
        return "fp16"
    return "bf16"


@dataclass(frozen=True)
class Run:
    id: str
    family: str
    source: str
    setup: TrainingSetup
    step_time_s: float          # published, or recovered from the published throughput in its convention
    basis: str                  # measured | tokens/s | TFLOP/s (convention) | MFU (convention)
    data: dict[str, str]


def family_of(row_id: str) -> str | None:
    if any(row_id.startswith(p) for p in EXCLUDED):
        return None
    return next((fam for prefix, (fam, _) in FAMILIES.items() if row_id.startswith(prefix)), None)


def _num(d: dict[str, str], key: str) -> float | None:
    v = d.get(key, "")
    return float(v) if v not in ("", None) else None


def _assumed(d: dict[str, str], key: str) -> int | None:
    m = re.search(rf"assumed_{key}=(\d+)", d.get("derived", ""))
    return int(m.group(1)) if m else None


def _int(d: dict[str, str], key: str, default: int) -> int:
    v = _num(d, key)
    return int(v) if v is not None else (_assumed(d, key) or default)


def model_of(d: dict[str, str]) -> LlmModel:
    name = re.sub(r"\s*\[.*\]$", "", d["model"])
    if d["id"].startswith("T-NEMO-") and name in NEMO_SHAPES:
        shape = {k: v for k, v in NEMO_SHAPES[name].items() if k != "source"}
        return LlmModel(id="run", name=name, source="nemo-models.yaml", params_b=float(d["params_b"]),
                        max_context=int(d["seq_len"]), tied_embeddings=False, **shape)
    extra = SHAPES["models"].get(name, {})
    gelu = any(name.startswith(p) for p in SHAPES["prefixes_gelu"])
    mlp = extra.get("mlp", "gelu" if gelu else SHAPES["defaults"]["mlp"])
    if "Llama" in name or "Llama" in d["model"]:
        mlp = "swiglu"
    return LlmModel(
        id="run", name=name, source=extra.get("source", d["source"]), params_b=float(d["params_b"]),
        layers=int(d["layers"]), hidden=int(d["hidden"]), ffn_hidden=int(d["ffn_hidden"]), heads=int(d["heads"]),
        kv_heads=int(d["kv_heads"] or d["heads"]), head_dim=extra.get("head_dim"), vocab=int(d["vocab"]),
        max_context=int(d["seq_len"]), tied_embeddings=False, mlp=mlp,
        moe=Moe(**extra["moe"]) if "moe" in extra else None, mla=Mla(**extra["mla"]) if "mla" in extra else None)


# Settings the sources leave out, per family: (fused attention, sequence parallelism with TP,
# gradient bytes reduced). Megatron-Bridge and NeMo 2 recipes reduce gradients in fp32
# (grad_reduce_in_fp32); Megatron-LM's defaults reduce in bf16; LLM Foundry's FSDP
# `mixed_precision=DEFAULT` reduces in fp32 (PURE in bf16). The 2021-22 Megatron runs, BLOOM and MT-NLG
# predate fused attention and (except Korthikanti's own) sequence parallelism; MegaScale's 2023
# Megatron-LM baseline has both.
FAMILY_DEFAULTS = {
    "korthikanti": (False, None, 2.0), "narayanan": (False, False, 2.0), "historical": (False, False, 2.0),
    "megascale": (True, True, 2.0), "megatron-bridge": (True, True, 4.0), "nemo-25": (True, True, 4.0),
    "nemo-24.07": (True, True, 4.0), "nemo-long-context": (True, True, 4.0), "kempnerforge": (True, True, 4.0),
}


# Llama 3 (section 3.3.2) runs an interleaved schedule, bubble (PP-1)/(V M), but does not print V: taken as
# 4 (of the 2, 4 or 8 that its 8 layers per stage allow), never fitted.
ASSUMED_VPP = {"llama3": 4}


def sharding_of(d: dict[str, str], family: str, dp: int, cp: int) -> Sharding:
    text = d.get("sharding", "").lower()
    grad = FAMILY_DEFAULTS.get(family, (True, True, 2.0))[2]
    if "mixed_precision=default" in text:
        grad = 4.0
    # torchtitan / AutoModel print the FSDP degree; Megatron-Bridge's FSDP column is a switch
    # ("FSDP > 0: use FSDP with sharding group size = #GPUs / (TP x PP)")
    group = re.search(r"fsdp2[^(]*\(fsdp=(\d+)", text)
    if "shard_grad_op" in text or "zero-2" in text or "params kept after forward" in text:
        return Sharding(2, None, grad)
    if "full_shard" in text or ("fsdp" in text and "kept" not in text):
        g = int(group.group(1)) * cp if group else None        # torchtitan shards over FSDP x CP
        return Sharding(3, g if g and g < dp * cp else None, grad)
    if "ddp" in text and "distributed optimizer" not in text:
        return Sharding(0, None, grad)
    return Sharding(1, None, grad)


def recompute_of(d: dict[str, str]) -> tuple[str, float]:
    text = d.get("recompute", "").lower()
    if not text:
        return "none", 1.0
    if text.startswith("none") or text.startswith("no "):
        return "none", 1.0
    if "selective layer" in text:
        return "full", 0.5          # torchtitan: every other layer checkpointed whole
    if text.startswith("full"):
        return "full", 1.0
    return "selective", 1.0


def _global_batch(d: dict[str, str], dp: int) -> int:
    """The published global batch, else the local batch per DP rank times DP (torchtitan Table 6)."""
    if d["global_batch"]:
        return int(d["global_batch"])
    local = re.search(r"Local batch size (\d+) \(per DP rank\)", d["note"])
    if local is None:
        raise ValueError(f"{d['id']}: no global batch")
    return int(local.group(1)) * dp


def _micro_batch(d: dict[str, str], family: str, dp: int, pp: int) -> int:
    """torchtitan runs its local batch as one micro-batch unless it pipelines (then micro-batches of 1)."""
    if family == "torchtitan" and pp == 1 and not d["micro_batch"]:
        return max(1, _global_batch(d, dp) // dp)
    return _int(d, "micro_batch", 1)


def setup_of(d: dict[str, str], family: str) -> TrainingSetup:
    gpu = gpu_of(d["gpu"])
    n = int(d["num_gpus"])
    tp, pp, cp = _int(d, "tp", 1), _int(d, "pp", 1), _int(d, "cp", 1)
    # the B200 long-context rows print a #GPUs 4x the product of their parallelism; the printed degrees
    # are kept (they give every row a global batch >= DP; TFLOP/s per GPU holds either way)
    dp = _int(d, "dp", 1) if d["id"].startswith("T-NEMOLS-B200") else n // (tp * pp * cp)
    domain = 72 if gpu.id in ("gb200", "gb300") else SERVER_GPUS.get(family, 8)
    gbps = 800.0 if gpu.id in ("gb300", "b300") else 200.0 if gpu.id.startswith("a100") else 400.0
    recompute, share = recompute_of(d)
    flash, sp, _ = FAMILY_DEFAULTS.get(family, (True, True, 2.0))
    if sp is None:
        sp = "sequence parallel" in d.get("recompute", "")
    return TrainingSetup(
        model=model_of(d), gpu=gpu, tp=tp, pp=pp, dp=dp, cp=cp, ep=_int(d, "ep", 1),
        vpp=_int(d, "vpp", ASSUMED_VPP.get(family, 1)),
        seq=int(d["seq_len"]), global_batch=_global_batch(d, dp), micro_batch=_micro_batch(d, family, dp, pp),
        precision=precision_of(d["precision"]), recompute=recompute, recompute_share=share,
        sequence_parallel=tp > 1 and sp, tp_comm_overlap=tp > 1 and _tp_overlap(d, family),
        dp_comm_overlap=family not in LEGACY_DP,
        flash_attention=flash, sharding=sharding_of(d, family, dp, cp),
        fabric=reference_fabric(gbps, domain, SERVER_GPUS.get(family, 8)), mtp_layers=mtp_layers_of(d, family))


def mtp_layers_of(d: dict[str, str], family: str) -> int:
    """DeepSeek-V3's one MTP module, where the source trains it: the Megatron-Bridge rows (their TFLOP/s over
    tokens/s is 260 GFLOP per token, 249.7 on the rows labelled '[w/o MTP]'; AutoModel's 249.5-249.7)."""
    return int(family == "megatron-bridge" and d["model"].startswith("DeepSeek-V3") and "w/o MTP" not in d["model"])


# Megatron-LM before its --overlap-grad-reduce / --overlap-param-gather (late 2023) reduced gradients after
# backward: the 2021-22 runs, BLOOM / MT-NLG (Megatron-DeepSpeed) and MegaScale's Megatron-LM baseline
# (whose DP overlap is one of MegaScale's own contributions)
LEGACY_DP = ("korthikanti", "narayanan", "historical", "megascale")


def _tp_overlap(d: dict[str, str], family: str) -> bool:
    """TP communication overlap: stated by the Megatron-LM README ("--tp-comm-overlap") and the torchtitan
    async-TP rows; the default of the Megatron-Core / NeMo performance recipes."""
    if family in ("megatron-lm", "megatron-bridge", "nemo-25", "nemo-24.07", "nemo-long-context"):
        return True
    return "asynctp" in d["id"].lower().replace("-", "") or "asynctp" in d["note"].lower().replace(" ", "")


def convention_flops(run_family: str, s: TrainingSetup) -> float:
    """FLOPs of one step in the source's own convention."""
    m, b, seq = s.model, s.global_batch, s.seq
    h, layers, v = m.hidden, m.layers, m.vocab
    if run_family == "narayanan":
        return 96 * b * seq * layers * h * h * (1 + seq / (6 * h) + v / (16 * layers * h))
    if run_family == "megatron-lm":
        return 72 * b * seq * layers * h * h * (1 + seq / (6 * h) + v / (12 * layers * h))
    if run_family == "llama3":
        return (6 * m.params_b * 1e9 + 12 * layers * h * seq) * b * seq
    if run_family == "kempnerforge":
        return (6 * (m.params_b * 1e9 - v * h) + 12 * layers * h * seq) * b * seq
    from validator.derive.estimate.flops import training_model_flops

    return training_model_flops(m, seq, b * seq, convention="full")


def published_step(d: dict[str, str], family: str, s: TrainingSetup) -> tuple[float, str]:
    tokens = s.global_batch * s.seq
    n = s.gpus
    if (step := _num(d, "step_time_s")) is not None:
        return step, "measured step time"
    if (tps := _num(d, "tokens_per_s_per_gpu")) is not None:
        return tokens / (tps * n), "tokens/s"
    if (tps := _num(d, "tokens_per_s")) is not None:
        return tokens / tps, "tokens/s"
    tflops = _num(d, "tflops_per_gpu")
    basis = "TFLOP/s"
    if tflops is None and (mfu := _num(d, "mfu_pct")) is not None:
        tflops, basis = mfu / 100 * s.gpu.tflops["bf16"], "MFU"
    if tflops is None:
        raise ValueError(f"{d['id']}: no published result")
    return convention_flops(family, s) / (n * tflops * 1e12), f"{basis} ({CONVENTION[family]})"


def _rows() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for path in FILES:
        with open(path, newline="", encoding="utf-8") as fh:
            out += [r for r in csv.DictReader(fh) if r["kind"] == "training"]
    return out


def _config(d: dict[str, str]) -> tuple[str, ...]:
    """What makes two Megatron-Bridge rows the same configuration, whatever the release."""
    keys = ("table", "model", "gpu", "num_gpus", "precision", "tp", "pp", "dp", "cp", "ep", "vpp", "global_batch",
            "micro_batch", "seq_len")
    table = re.sub(r"^\d\d\.\d\d ", "", d["table"])
    return (table, *(d[k] for k in keys[1:]), precision_of(d["precision"]))


def _superseded() -> dict[str, str]:
    """Megatron-Bridge rows re-measured by a later release of the same table: the release that supersedes
    each. The estimator models current software; older releases of a configuration measure older code
    (MoE rows of one configuration speed up by up to 1.8x between 25.09 and 26.08)."""
    newest: dict[tuple[str, ...], str] = {}
    for d in _rows():
        if d["id"].startswith("T-MB"):
            key = _config(d)
            newest[key] = max(newest.get(key, d["id"]), d["id"], key=lambda i: i.split("-")[1])
    return {d["id"]: newest[_config(d)] for d in _rows() if d["id"].startswith("T-MB") and
            newest[_config(d)] != d["id"]}


@cache
def runs() -> tuple[Run, ...]:
    out = []
    superseded = _superseded()
    for d in _rows():
        family = family_of(d["id"])
        if family is None or d["id"] in superseded:
            continue
        s = setup_of(d, family)
        step, basis = published_step(d, family, s)
        out.append(Run(d["id"], family, d["source"], s, step, basis, d))
    return tuple(out)


def fit_runs() -> tuple[Run, ...]:
    """The runs the constants may be fitted on: every run but those of the held-out-only sources."""
    return tuple(r for r in runs() if r.family not in HELD_OUT_ONLY)


def excluded() -> list[tuple[str, str]]:
    out = [(d["id"], next(v for k, v in EXCLUDED.items() if d["id"].startswith(k)))
           for d in _rows() if family_of(d["id"]) is None]
    return out + [(rid, f"re-measured by {newer}") for rid, newer in _superseded().items()]


def with_fabric(run: Run, gbps: float) -> TrainingSetup:
    return replace(run.setup, fabric=replace(run.setup.fabric, gbps_per_gpu=gbps))


def design_training(run: Run) -> Training:
    """The run as a design's `training:` section (for the memory rule)."""
    s = run.setup
    recompute_layers = None
    if s.recompute == "full" and s.recompute_share < 1:
        recompute_layers = round(s.recompute_share * max(s.stage_layers))
    return Training.model_validate({
        "model": "run", "sequence_length": s.seq, "global_batch": s.global_batch, "micro_batch": s.micro_batch,
        "precision": s.precision, "zero_stage": s.sharding.stage, "sharding_group": s.sharding.group,
        "recompute": s.recompute, "recompute_layers": recompute_layers, "flash_attention": s.flash_attention,
        "dp_comm_overlap": s.dp_comm_overlap,
        "pipeline_layers": list(s.pipeline_layers) if s.pipeline_layers else None,
        "parallelism": {"tp": s.tp, "pp": s.pp, "dp": s.dp, "cp": s.cp, "ep": s.ep, "vpp": s.vpp,
                        "sequence_parallel": s.sequence_parallel, "tp_comm_overlap": s.tp_comm_overlap}})
