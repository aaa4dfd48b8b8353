"""Training rules: the memory rule accepts what published runs ran, uneven pipelines are accepted,
expert parallelism across nodes is checked against the fabric (TRN010 cases), and the typed estimate
reaches the rules and the JSON."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import FIXTURES, ROOT, cli, rel
from tests.training_runs import design_training, runs
from validator.check.context import Context
from validator.check.registry import RULES
from validator.derive import Derived
from validator.derive.estimate.training_memory import training_memory
from validator.derive.estimate.training_report import fabric_path, training_report
from validator.pipeline import analyze
from validator.read.model import Training

RULE_CASES = ROOT / "tests" / "rules"
OWN_RULES = ("TRN010",)

# Runs whose sources publish everything the memory estimate needs (recomputation, micro-batch,
# sharding): LLM Foundry, torchtitan, Korthikanti, Narayanan, BLOOM and MT-NLG.
STATED = [r for r in runs() if r.family in ("llm-foundry", "torchtitan", "korthikanti", "narayanan", "historical")]
TOLERANCE = 0.10      # thresholds.yaml memory_fit_tolerance_pct


@pytest.mark.parametrize("run", STATED, ids=lambda r: r.id)
def test_memory_accepts_configurations_that_ran(run):
    mem = training_memory(run.setup.model, design_training(run), reserve_gb=4.0)
    assert mem.total_gb <= run.setup.gpu.memory_gb * (1 + TOLERANCE), f"{mem}"


@pytest.mark.parametrize(("run_id", "states_gib", "activations_gib"), [
    # Korthikanti et al. 2022 Fig. 1 as encoded in Calculon (shared/docs/estimator-notes.md 2.6): weights +
    # gradients + optimizer (Megatron, 18 B/parameter) and activations with sequence parallelism and
    # selective recomputation, GiB per GPU
    ("T-KOR5-22B-seqsel", 45.6, 9.6), ("T-KOR5-175B-seqsel", 45.6, 12.4),
    ("T-KOR5-530B-seqsel", 31.6, 23.1), ("T-KOR5-1T-seqsel", 33.0, 26.6)])
def test_memory_matches_korthikanti(run_id, states_gib, activations_gib):
    run = next(r for r in runs() if r.id == run_id)
    mem = training_memory(run.setup.model, design_training(run), reserve_gb=0)
    gib = 2**30 / 1e9
    assert (mem.weights_gb + mem.gradients_gb + mem.optimizer_gb) / gib == pytest.approx(states_gib, rel=0.02)
    assert mem.activations_gb / gib == pytest.approx(activations_gib, rel=0.03)


def _training(**kw: object) -> Training:
    base = {"model": "llama3-70b", "parallelism": {"tp": 8, "pp": 4, "dp": 4}, "sequence_length": 8192,
            "global_batch": 64, "micro_batch": 1}
    base.update(kw)
    return Training.model_validate(base)


def test_memory_terms_respond_to_the_new_settings():
    from validator.resolve.catalog import builtin_catalog

    model = builtin_catalog().model("llama3-70b")
    base = training_memory(model, _training(), 4.0)
    # distributed optimizer (ZeRO-1): 2 + 4 + 12/d bytes per parameter vs 18 without sharding
    psi = model.params_b * 1e9 / 32
    assert base.weights_gb + base.gradients_gb + base.optimizer_gb == pytest.approx(psi * (6 + 12 / 4) / 1e9)
    full = training_memory(model, _training(recompute="full"), 4.0)
    offload = training_memory(model, _training(activation_offload=0.5), 4.0)
    cp = training_memory(model, _training(parallelism={"tp": 8, "pp": 4, "dp": 2, "cp": 2}), 4.0)
    hsdp = training_memory(model, _training(zero_stage=3, sharding_group=2), 4.0)
    fsdp = training_memory(model, _training(zero_stage=3), 4.0)
    assert full.activations_gb < base.activations_gb / 4
    assert offload.activations_gb == pytest.approx(base.activations_gb / 2) and offload.offloaded_gb > 0
    assert cp.activations_gb < base.activations_gb * 0.6
    assert fsdp.optimizer_gb < hsdp.optimizer_gb < base.optimizer_gb * 4


def _design(**training: object) -> dict:
    data = yaml.safe_load((FIXTURES / "valid" / "small-training.yaml").read_text())
    data["training"].update(copy.deepcopy(training))
    return data


def _hits(design: dict, rule: str) -> list:
    topo = topology_of(design)
    check = next(r for r in RULES if r.id == rule).check
    return list(check(Context(topo, Derived(topo))))


def test_uneven_pipeline_is_accepted_and_a_declared_split_is_checked():
    # Llama 3 405B: 126 layers on PP 16 (Megatron's first/last-stage shortfall)
    d = _design(model="llama3-405b", parallelism={"tp": 8, "pp": 16, "dp": 2}, global_batch=64)
    assert _hits(d, "TRN005") == []
    ok = _design(model="llama3-405b", parallelism={"tp": 8, "pp": 16, "dp": 2}, global_batch=64,
                 pipeline_layers=[6] + [8] * 14 + [8])
    assert _hits(ok, "TRN005") == []
    wrong = _design(model="llama3-405b", parallelism={"tp": 8, "pp": 16, "dp": 2}, global_batch=64,
                    pipeline_layers=[8] * 16)
    [hit] = _hits(wrong, "TRN005")
    assert "16 entries summing to the model's 126" in hit.message
    thin = _design(parallelism={"tp": 8, "pp": 16, "dp": 2, "vpp": 4}, global_batch=64)   # 32 layers: 2 per stage
    assert any("virtual stages" in h.message for h in _hits(thin, "TRN005"))


def test_hsdp_group_must_divide_the_data_parallel_ranks():
    d = _design(zero_stage=3, sharding_group=5)
    assert any("sharding_group 5" in h.message for h in _hits(d, "TRN005"))
    assert _hits(_design(zero_stage=3, sharding_group=8), "TRN005") == []


def test_typed_estimate_reaches_rules_and_json():
    path = ROOT / "designs" / "superpod-h100-4su.yaml"
    result = analyze(path, rel(path))
    assert result.derived is not None
    est = result.derived.estimate
    assert est.kind == "training" and est.training is not None
    report = est.training
    assert report.memory.total_gb < report.hbm_gb
    assert report.goodput is not None and 0.5 < report.goodput.goodput < 1
    assert report.days is not None and report.ideal_days is not None and report.days > report.ideal_days
    code, out, _ = cli("estimate", rel(path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / "estimate.schema.json").read_text())).validate(data)
    assert data["time_to_train_days"] == pytest.approx(data["time_to_train_ideal_days"] / data["goodput"], rel=2e-3)
    assert data["calibrated"] is True and data["mfu_full_attention"] > data["mfu"]


def test_fabric_path_from_the_topology():
    # DGX H100 SuperPOD, rail-optimized: 8 x 400G per DGX = 400 Gb/s per GPU; a 64-port QM9700 leaf of one
    # rail serves 32 DGX (32 down, 32 up, 1:1) = 256 GPUs below it; the spine tier is the top.
    design = yaml.safe_load((ROOT / "designs" / "superpod-h100-4su.yaml").read_text())
    path = fabric_path(topology_of(design))
    assert path.gbps_per_gpu == 400 and path.nvlink_domain == 8
    assert (path.tiers[0].reach_gpus, path.tiers[0].ratio) == (256, 1.0)
    assert path.levels(8) == 0 and path.levels(256) == 1 and path.levels(257) == 2
    # tapered 3:1, the leaf has 48 down and 16 up: 48 DGX = 384 GPUs below it, and the collectives that
    # climb to the spine (the pipeline sends of 8 x 31 x 2 GPUs) slow the step
    design["fabrics"]["compute"]["oversubscription"] = "3:1"
    tapered_topology = topology_of(design)
    tapered = fabric_path(tapered_topology)
    assert (tapered.tiers[0].reach_gpus, tapered.tiers[0].ratio) == (384, 3.0)
    assert tapered.taper(500) == 3.0 and tapered.taper(300) == 1.0
    flat = training_report(topology_of(yaml.safe_load((ROOT / "designs" / "superpod-h100-4su.yaml").read_text())),
                           None)
    assert training_report(tapered_topology, None).estimate.step_time_s > flat.estimate.step_time_s
