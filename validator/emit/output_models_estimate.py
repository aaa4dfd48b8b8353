"""Typed model of the performance estimate (`estimate --format json`, `clusterplan.api.estimate`): a
training or an inference estimate by `kind`; schemas/estimate.schema.json is generated from it
(validator/emit/schemas.py). The estimate is built in validator/derive/estimate/ (`Estimate.as_dict()`,
the training report's and the serving estimate's `as_dict()`); a key added there is added here, and the
schema regenerated (`clusterplan schema estimate -o schemas/estimate.schema.json`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from validator.emit.output_models import Count, NonNeg, Share, _Out

Seconds = Annotated[float, Field(ge=0)]



class Trust(_Out):
    """How far to trust the headline figures: for each, a low-high interval from the model's held-out error
    on published runs of the same kind (validator/data/intervals.yaml, docs/estimator.md), and the ways this
    configuration lies outside every run the constants were fitted on"""

    basis: str = Field(description="Which held-out errors the intervals come from, and at which percentiles")
    intervals: dict[str, tuple[float | None, float | None]] = Field(
        description="Headline figure (a key of this estimate) -> [low, high]")
    outside_fit: list[str] = Field(description="Empty when every checked quantity lies within the fitted runs; "
                                   "else one reason each (the interval is then no guarantee)")


class BlockingFinding(_Out):
    rule: str
    line: int
    message: str


class _Common(_Out):
    version: Literal[2]
    name: str
    file: str
    assumptions: dict[str, Any] = Field(description="Efficiencies and conventions used, to challenge")
    trust: Trust
    valid: bool = Field(True, description="False when the design fails a blocking rule (an unwaived error: "
                        "weights that do not fit, an overloaded pool, ...): every figure is then of a configuration "
                        "that cannot run as written. Printed by `clusterplan estimate`")
    blocked_by: list[BlockingFinding] = Field(
        [], description="The unwaived error findings that make the configuration invalid")


class Breakdown(_Out):
    """Seconds per component of the step"""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": {"type": "number",
                                                                                          "minimum": 0}})

    compute: Seconds
    recompute: Seconds
    tp: Seconds
    cp: Seconds
    ep: Seconds
    pp: Seconds
    dp: Seconds
    bubble: Seconds
    optimizer: Seconds
    offload: Seconds
    straggler: Seconds


class TrainingMemory(_Out):
    """Memory per GPU, GB"""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": {"type": "number"}})

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    reserve_gb: float
    offloaded_gb: float
    total_gb: float
    hbm_gb: float


class Reliability(_Out):
    interruptions_per_day: float
    checkpoint_write_s: float
    checkpoint_blocking_s: float
    checkpoint_interval_minutes: float
    restart_minutes: float


class TrainingEstimate(_Common):
    kind: Literal["training"]
    step_time_s: float = Field(gt=0)
    mfu: Share = Field(description="Model FLOPs utilization: matmul FLOPs, 3 x forward, attention as a causal "
                       "kernel executes it (half of s^2), over the dense peak at the design's precision")
    mfu_full_attention: float = Field(ge=0, description="The same step with the full s^2 counted (Megatron-LM "
                                      "before 2025, NeMo <= 25.07, LLM Foundry): for comparison with those tables; "
                                      "above 1 is possible at very long sequences")
    hfu: Share = Field(description="Hardware FLOPs utilization (executed FLOPs incl. recompute)")
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    time_to_train_ideal_days: float | None = Field(description="Token budget at the estimated throughput, no "
                                                   "interruptions; null without a token budget")
    time_to_train_days: float | None = Field(description="Ideal time / goodput; null without a token budget or a "
                                             "storage write bandwidth")
    goodput: Share | None = Field(description="Useful training time / wall clock (checkpoints, interruptions, "
                                  "restarts); null without a storage write bandwidth")
    cost_per_run_usd: float | None = Field(description="GPU-hours of the run (with goodput) at the GPU-hour cost; "
                                           "null without prices")
    uncertainty_pct: float = Field(ge=0, description="Stated uncertainty of the step time: the held-out error of "
                                   "this GPU's constants, wider when uncalibrated")
    calibrated: bool = Field(description="false: no published run of this GPU and precision; constants borrowed")
    comm_share: Share
    scaling_efficiency: Share
    bubble_fraction: Share
    microbatches_per_step: Count
    pipeline_layers: list[NonNeg] = Field(description="Layers per pipeline stage, first to last")
    dp_traffic_gb_per_step: float = Field(ge=0, description="Bytes one GPU moves in data-parallel collectives per "
                                          "step (ZeRO-3: every micro-batch's gathers)")
    breakdown: Breakdown
    memory_per_gpu_gb: TrainingMemory
    reliability: Reliability | None


Ms = float | None


class InferenceEstimate(_Common):
    kind: Literal["inference"]
    mode: Literal["aggregated", "disaggregated"]
    engine: Literal["vllm", "sglang", "trtllm", "deepseek"]
    weights_gb_per_gpu: float
    kv_bytes_per_token: int = Field(description="Whole model, all layers, exact")
    kv_bytes_per_token_per_gpu: int = Field(description="One GPU of an attention rank, exact")
    kv_gb_per_gpu: float
    kv_tokens_per_replica: int
    max_concurrency_per_replica: int = Field(description="At max_context_tokens, as vLLM sizes it, all attention "
                                             "ranks")
    batch: int = Field(description="Running sequences per replica at full load")
    batch_limit: str = Field(description="What caps the batch: max_num_seqs, kv_cache, token_budget, given")
    requests_per_s_per_replica: float = Field(description="Full load, every request's prefill included")
    output_tokens_per_s_per_replica: float
    output_tokens_per_s_per_gpu: float = Field(description="Output tokens only (first token included); "
                                               "disaggregated: per GPU of prefill + decode in the ratio the load needs")
    total_tokens_per_s_per_gpu: float = Field(description="Input + output tokens")
    prefill_tokens_per_s_per_gpu: float | None = Field(description="Prefill pool (disaggregated), prompt tokens not "
                                                       "served from the prefix cache")
    decode_tokens_per_s_per_gpu: float | None = Field(description="Decode pool alone (disaggregated), output tokens")
    target_qps: float | None = Field(description="Target load with headroom; null without a target")
    ttft_ms: Ms = Field(description="p99 at the target load on the planned fleet (light load without a target); "
                        "null when overloaded")
    tpot_ms: Ms = Field(description="p99, as ttft_ms")
    ttft_p50_ms: Ms
    tpot_p50_ms: Ms
    kv_transfer_ms: Ms = Field(description="One prompt's KV cache, prefill rank to decode rank")
    kv_transfer_gbps: float | None
    replicas_needed: int | None = Field(description="Fewest (decode) replicas meeting every SLO and the concurrency "
                                        "target at the target load")
    prefill_replicas_needed: int | None
    replicas_planned: int
    prefill_replicas_planned: int | None
    fleet_capacity_qps: float = Field(description="Most requests/s the planned fleet carries at the SLOs")
    headroom_pct: float | None
    cost_per_million_tokens: float | None = Field(description="USD per million output tokens; null without prices")
    cost_per_million_total_tokens: float | None = Field(description="USD per million input + output tokens")


class Estimate(RootModel[Annotated[TrainingEstimate | InferenceEstimate, Field(discriminator="kind")]]):
    """Performance estimate of a design. Version 2. Times in seconds unless the key says ms; null means unknown
    (no price) or not reachable (the planned fleet cannot carry the load)."""

    model_config = ConfigDict(title="clusterplan estimate --format json", defer_build=True)
