"""The training half of `clusterplan estimate`: a design's topology -> TrainingSetup -> TrainingReport
(step time, MFU, memory, goodput, time-to-train and cost), typed for the rules and `as_dict()` for the
JSON output (schemas/estimate.schema.json)."""

from __future__ import annotations

import math
from typing import Any

from validator.base.facts import fact
from validator.derive.estimate.goodput import Goodput, GoodputInputs, goodput, reliability
from validator.derive.estimate.hardware import gbps_per_gpu
from validator.derive.estimate.setup import FabricPath, FabricTier, Sharding, TrainingSetup
from validator.derive.estimate.training import MFU_CONVENTION, TrainingEstimate, estimate_training
from validator.derive.estimate.training_memory import TrainingMemory, training_memory
from validator.expand.topology import Topology
from validator.read.model import Training
from validator.resolve.catalog.entries import LlmModel


def fabric_path(topology: Topology, fabric: str = "compute") -> FabricPath:
    """NIC bandwidth per GPU and, per switch tier, the GPUs below one switch and its taper, from the
    expanded compute fabric."""
    r = topology.resolved
    domain = r.nvlink_domain_gpus
    fab = r.fabrics.get(fabric)
    if fab is None or not fab.links_per_server or fabric not in topology.fabrics:
        return FabricPath(0.0, (), domain, rdma=False)
    per_gpu = gbps_per_gpu(r, fabric)
    plane = topology.fabrics[fabric].plane
    gpus = r.server.gpus
    su_leaves = max(1, plane.rails * plane.leaves_per_rail)
    reach = [plane.servers_per_leaf * gpus, max(1, plane.leaves_per_pod // su_leaves) * plane.su_servers * gpus]
    tiers = tuple(FabricTier(reach[i] if i < len(plane.tiers) - 1 and i < 2 else 10**9, t.ratio)
                  for i, t in enumerate(plane.tiers))
    return FabricPath(per_gpu, tiers, domain, rdma=fab.spec.type in ("infiniband", "roce"))


def training_setup(topology: Topology) -> TrainingSetup:
    r = topology.resolved
    t = r.training
    p = t.parallelism
    share = 1.0
    if t.recompute == "full" and t.recompute_layers is not None:
        share = min(1.0, t.recompute_layers * p.pp / r.model.layers)
    return TrainingSetup(
        model=r.model, gpu=r.gpu, tp=p.tp, pp=p.pp, dp=p.dp, cp=p.cp, ep=p.ep, vpp=p.vpp, seq=t.sequence_length,
        global_batch=t.global_batch, micro_batch=t.micro_batch, precision=t.precision, recompute=t.recompute,
        recompute_share=share, sequence_parallel=p.sequence_parallel and p.tp > 1, tp_comm_overlap=p.tp_comm_overlap,
        dp_comm_overlap=t.dp_comm_overlap,
        flash_attention=t.flash_attention, sharding=Sharding(t.zero_stage, t.sharding_group),
        fabric=fabric_path(topology), pipeline_layers=tuple(t.pipeline_layers) if t.pipeline_layers else None,
        activation_offload=t.activation_offload, tokens=t.tokens, trainable_share=trainable_share(r.model, t),
        mtp_layers=t.mtp_layers)


def trainable_share(model: LlmModel, t: Training) -> float:
    """Trained parameters over the model's: 1 unless `trainable_params_b` freezes the rest."""
    return 1.0 if t.trainable_params_b is None else min(1.0, t.trainable_params_b / model.params_b)


def goodput_inputs(topology: Topology, gpus: int) -> GoodputInputs:
    r = topology.resolved
    t = r.training
    storage = r.design.storage
    g, ck = t.goodput, t.checkpoint
    rate = g.interruptions_per_gpu_hour if g and g.interruptions_per_gpu_hour is not None else \
        reliability("interruptions_per_gpu_hour")
    restart = g.restart_minutes if g and g.restart_minutes is not None else reliability("restart_minutes")
    checkpoint_gb = r.model.params_b * reliability("checkpoint_bytes_per_parameter")
    write = storage.write_gbytes_s if storage else None
    if write is None:       # storage sized to the checkpoint target: the assumption STORAGE_ASSUMED states
        write = checkpoint_gb / checkpoint_target_s(topology)
    return GoodputInputs(
        gpus=gpus, interruptions_per_gpu_hour=rate, checkpoint_gb=checkpoint_gb, write_gbytes_s=write,
        read_gbytes_s=storage.read_gbytes_s if storage else None, restart_minutes=restart,
        interval_minutes=ck.interval_minutes if ck else None, async_save=bool(ck and ck.async_save))


def checkpoint_target_s(topology: Topology) -> float:
    """The design's checkpoint write target, else thresholds.yaml's (TRN008 checks storage against it)."""
    ck = topology.resolved.training.checkpoint
    if ck is not None:
        return ck.write_target_s
    return topology.resolved.threshold("checkpoint_write_target_s")


def storage_assumption(topology: Topology) -> str | None:
    """What time-to-train assumes about checkpoint storage the design does not describe, or None."""
    storage = topology.resolved.design.storage
    if storage is not None and storage.write_gbytes_s is not None:
        return None
    return (f"no storage write bandwidth in the design: a full checkpoint is assumed to write in "
            f"{checkpoint_target_s(topology):g} s (the checkpoint write target, storage sized to meet it); "
            "declare storage: {type: parallel-fs, write_gbytes_s: ...} for your own")


@fact
class TrainingReport:
    setup: TrainingSetup
    estimate: TrainingEstimate
    memory: TrainingMemory
    hbm_gb: float
    goodput: Goodput | None
    gpu_hour_usd: float | None
    storage_assumed: str | None = None    # set when the checkpoint storage is assumed, not declared
    kind: str = "training"

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self.estimate.tokens_per_s / self.setup.gpus

    @property
    def ideal_days(self) -> float | None:
        tokens = self.setup.tokens
        return tokens / self.estimate.tokens_per_s / 86400 if tokens else None

    @property
    def days(self) -> float | None:
        ideal = self.ideal_days
        # goodput 0 (checkpoints or restarts take all the time): the run never finishes, no figure to give
        if ideal is None or self.goodput is None or self.goodput.goodput <= 0:
            return None
        return ideal / self.goodput.goodput

    @property
    def cost_usd(self) -> float | None:
        if self.days is None or self.gpu_hour_usd is None:
            return None
        return self.days * 24 * self.setup.gpus * self.gpu_hour_usd

    def as_dict(self) -> dict[str, Any]:
        e, m = self.estimate, self.memory
        g = self.goodput
        return {
            "kind": "training", "step_time_s": e.step_time_s, "mfu": e.mfu, "mfu_full_attention": e.mfu_full_attention,
            "hfu": e.hfu, "model_tflops_per_gpu": e.model_tflops_per_gpu,
            "hardware_tflops_per_gpu": e.hardware_tflops_per_gpu, "tokens_per_s": e.tokens_per_s,
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu, "time_to_train_ideal_days": self.ideal_days,
            "time_to_train_days": self.days, "goodput": g.goodput if g else None,
            "cost_per_run_usd": self.cost_usd, "uncertainty_pct": 100 * e.constants.uncertainty,
            "calibrated": e.constants.calibrated, "comm_share": e.comm_share,
            "scaling_efficiency": e.scaling_efficiency, "bubble_fraction": e.bubble_fraction,
            "microbatches_per_step": e.microbatches, "pipeline_layers": list(e.stage_layers),
            "dp_traffic_gb_per_step": e.dp_traffic.total / 1e9, "breakdown": dict(e.breakdown),
            "memory_per_gpu_gb": {"weights_gb": m.weights_gb, "gradients_gb": m.gradients_gb,
                                  "optimizer_gb": m.optimizer_gb, "activations_gb": m.activations_gb,
                                  "reserve_gb": m.reserve_gb, "offloaded_gb": m.offloaded_gb,
                                  "total_gb": m.total_gb, "hbm_gb": self.hbm_gb},
            "reliability": None if g is None else {
                "interruptions_per_day": g.interruptions_per_day, "checkpoint_write_s": g.checkpoint_write_s,
                "checkpoint_blocking_s": g.checkpoint_blocking_s, "checkpoint_interval_minutes": g.interval_minutes,
                "restart_minutes": g.restart_minutes},
            "assumptions": {**e.assumptions, "mfu_convention": MFU_CONVENTION,
                            "goodput": "Young/Daly checkpoint-restart model, validator/data/reliability.yaml",
                            **({"checkpoint_storage": self.storage_assumed} if self.storage_assumed else {}),
                            **({"time_to_train": self.days_missing} if self.days_missing else {})},
        }

    @property
    def days_missing(self) -> str | None:
        """Why there is no time to train, in words a user acts on; None when there is one."""
        if self.days is not None:
            return None
        if not self.setup.tokens:
            return "not computed: the design gives no training.tokens (the number of tokens to train on)"
        return "not computed: checkpoints and restarts take all of the wall-clock time (goodput 0)"


def training_report(topology: Topology, gpu_hour_usd: float | None) -> TrainingReport:
    r = topology.resolved
    setup = training_setup(topology)
    memory = training_memory(r.model, r.training, r.threshold("memory_reserve_gb"))
    return TrainingReport(setup=setup, estimate=estimate_training(setup), memory=memory, hbm_gb=r.gpu.memory_gb,
                          goodput=goodput(goodput_inputs(topology, setup.gpus)), gpu_hour_usd=gpu_hour_usd,
                          storage_assumed=storage_assumption(topology))


def finite(x: float) -> bool:
    return not (math.isnan(x) or math.isinf(x))
