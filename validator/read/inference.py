"""The inference part of the design model: replicas, targets, the serving engine, disaggregation."""

from typing import Annotated, Literal

from pydantic import Field

from validator.read.enums import Precision
from validator.read.fields import CatalogId, Count, Fraction, Model, Positive


class Replica(Model):
    gpus: Count = Field(description="GPUs per model replica (one serving engine instance).")
    tp: Count = Field(1, description="Tensor parallel degree of attention (and of dense layers) within a replica.")
    pp: Count = Field(1, description="Pipeline parallel degree within a replica.")
    ep: Count = Field(1, description="Expert parallel degree (MoE): GPUs the routed experts are spread over; "
                      "the rest of each expert's sharding is tensor parallel (tp x dp_attention = ep x moe_tp).")
    dp_attention: Count | None = Field(
        None, description="Attention data-parallel ranks (DP attention, TensorRT-LLM 'DEP'): each rank runs "
        "attention for its own requests and holds their KV cache; experts stay sharded over the replica. "
        "Default: gpus / (tp x pp).")


class Autoscaling(Model):
    min: Count = Field(description="Fewest replicas.")
    max: Count = Field(description="Most replicas.")


class Targets(Model):
    concurrent_requests: Count | None = Field(None, description="Requests in flight the fleet must hold.")
    qps: Positive | None = Field(None, description="Requests per second the fleet must serve (Poisson arrivals).")
    output_tokens_per_s: Positive | None = Field(
        None, description="Load as output tokens per second of the fleet (converted to requests per second by "
        "output_tokens); the larger of this and `qps` is the target.")
    ttft_ms: Positive | None = Field(None, description="Time to first token target at the target load, p99, ms.")
    tpot_ms: Positive | None = Field(None, description="Time per output token target at the target load, p99, ms.")
    ttft_p50_ms: Positive | None = Field(None, description="Median time to first token target at the target load, "
                                         "ms.")
    tpot_p50_ms: Positive | None = Field(None, description="Median time per output token target at the target "
                                         "load, ms.")
    headroom_pct: Annotated[float, Field(ge=0, le=1000)] = Field(
        0, description="Extra load the fleet must absorb beyond the target, percent (replicas needed are sized "
        "for target x (1 + headroom)).")


class Speculative(Model):
    tokens: Annotated[int, Field(ge=1, le=16)] = Field(description="Draft tokens proposed per decode step (MTP, "
                                                        "EAGLE or a draft model).")
    acceptance: Annotated[float, Field(gt=0, lt=1)] = Field(
        description="Probability that each draft token is accepted (i.i.d.; DeepSeek-V3 reports 0.85-0.9 for "
        "its second token).")


class Engine(Model):
    name: Literal["vllm", "sglang", "trtllm", "deepseek"] = Field(
        "vllm", description="Serving engine whose scheduler defaults apply (validator/data/serving.yaml); "
        "`deepseek`: DeepSeek's own inference system (FlashMLA decode attention, decode all-to-all that frees "
        "the SMs and runs beside the other micro-batch's attention).")
    max_num_seqs: Count | None = Field(
        None, description="Most sequences one attention rank batches at once (vLLM max_num_seqs, SGLang "
        "max_running_requests, TensorRT-LLM max_batch_size); the KV pool may cap it lower.")
    max_batched_tokens: Count | None = Field(
        None, description="Token budget of one scheduler step per attention rank, decode plus prefill tokens "
        "(vLLM max_num_batched_tokens, TensorRT-LLM max_num_tokens, SGLang chunked_prefill_size).")
    chunked_prefill: bool | None = Field(
        None, description="Mix prefill chunks into decode steps (vLLM V1, TensorRT-LLM chunked context, SGLang "
        "mixed chunk); off: prefill and decode steps alternate. Default per engine.")
    prefix_cache_hit_rate: Annotated[float, Field(ge=0, lt=1)] = Field(
        0, description="Share of prompt tokens served from the prefix cache (not recomputed).")
    speculative: Speculative | None = Field(None, description="Speculative decoding (optional).")


class Pool(Model):
    replicas: Count = Field(description="Replicas in this pool.")
    replica: Replica = Field(description="Shape of one replica of this pool.")


class Disaggregation(Model):
    prefill: Pool = Field(description="The prefill pool.")
    decode: Pool = Field(description="The decode pool.")
    kv_transfer: Literal["rdma", "tcp", "nvlink"] = Field("rdma", description="How the KV cache moves from "
                                                           "prefill to decode.")
    kv_transfer_fabric: Literal["compute", "inband"] = Field("compute", description="Fabric the KV cache "
                                                              "crosses.")


class Inference(Model):
    model: CatalogId = Field(description="Model catalog id.")
    replica: Replica = Field(description="Shape of one replica (ignored for pools when disaggregated).")
    replicas: Count | None = Field(None, description="Fixed replica count.")
    autoscaling: Autoscaling | None = Field(None, description="Replica range when autoscaled.")
    weight_precision: Precision = Field(Precision.bf16, description="Weight precision.")
    kv_precision: Precision = Field(Precision.bf16, description="KV-cache precision.")
    prompt_tokens: Count = Field(description="Typical prompt (input) length, tokens.")
    output_tokens: Count = Field(description="Typical output length, tokens.")
    max_context_tokens: Count = Field(description="Maximum context (prompt + output) a request may use; "
                                      "KV capacity is sized at this length, as serving engines do.")
    gpu_memory_utilization: Fraction | None = Field(None, description="Share of HBM the engine may use "
                                                    "(default from data/defaults.yaml).")
    targets: Targets = Field(default_factory=Targets, description="Service targets: load and latency SLOs.")
    engine: Engine = Field(default_factory=Engine, description="Serving-engine scheduler settings.")
    disaggregation: Disaggregation | None = Field(None, description="Prefill/decode disaggregation.")

    @property
    def planned_replicas(self) -> int:
        """Replicas of the aggregated fleet as planned: the fixed count, else autoscaling.max, else 1."""
        return self.replicas or (self.autoscaling.max if self.autoscaling else 1)


