"""The sizing request of `clusterplan size` (schemas/clusterplan-sizing.schema.json is generated from it).

A request says what must run (a training job or a serving load with its SLOs) and what the cluster may
be built from (servers, compute-fabric options written as design `fabrics.compute` blocks, the rack and
site of a design's `site:`, and limits on GPUs, capex and site power). The search space and how to read
the answer: docs/planning.md.

    apiVersion: clusterplan/v1
    kind: SizingRequest
    metadata: {name: llama3-8b-pretrain}
    training: {model: llama3-8b, tokens: 1.0e11, deadline_days: 7, sequence_length: 8192, global_batch: 256}
    constraints:
      servers: [dgx-h100, dgx-h200]
      site: {rack: {power_budget_kw: 44, cooling: rear-door, rear_door: rdhx-active-75}}
      fabrics:
        ndr: {type: infiniband, speed_gbps: 400, topology: rail-optimized,
              tiers: {leaf: {switch: qm9700}, spine: {switch: qm9700}}}
      max_gpus: 512
"""

from pathlib import Path as FsPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from validator.base.errors import DesignError, Diagnostic, format_path
from validator.read.enums import Precision, Recompute
from validator.read.fields import CatalogId, Count, Positive
from validator.read.inference import Engine, Targets
from validator.read.loader import load_yaml, read_text
from validator.read.model import API_VERSION, Costs, Fabric, Metadata, Site, Storage

REQUEST_SCHEMA_FILE = "clusterplan-sizing.schema.json"
REQUEST_SCHEMA_ID = "https://clusterplan.dev/schemas/clusterplan-sizing.schema.json"
Degrees = Annotated[list[Annotated[int, Field(ge=1, le=1024)]], Field(min_length=1, max_length=16)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=True)


class TrainingWorkload(_Model):
    model: CatalogId = Field(description="Model catalog id, e.g. llama3-70b.")
    tokens: Annotated[float, Field(gt=0, le=1e16)] = Field(description="Tokens to train on, e.g. 15e12.")
    deadline_days: Positive | None = Field(None, description="The run must finish within this many days "
                                           "(estimated time to train). Give this or constraints.max_gpus.")
    sequence_length: Count = Field(description="Tokens per sequence.")
    global_batch: Count = Field(description="Sequences per optimizer step; data-parallel degrees are its "
                                "divisors.")
    micro_batch: Count = Field(1, description="Sequences per micro-batch.")
    precision: Precision = Field(Precision.bf16, description="Compute precision of the GEMMs.")
    zero_stage: Annotated[int, Field(ge=0, le=3)] = Field(1, description="ZeRO stage (as in a design).")
    recompute: Recompute = Field(Recompute.selective, description="Activation recomputation.")


class InferenceWorkload(_Model):
    model: CatalogId = Field(description="Model catalog id.")
    weight_precision: Precision = Field(Precision.bf16, description="Weight precision.")
    kv_precision: Precision = Field(Precision.bf16, description="KV-cache precision.")
    prompt_tokens: Count = Field(description="Typical prompt (input) length, tokens.")
    output_tokens: Count = Field(description="Typical output length, tokens.")
    max_context_tokens: Count = Field(description="Longest context a request may use (KV is sized at it).")
    targets: Targets = Field(description="Load (qps or output_tokens_per_s) and latency SLOs (TTFT, TPOT at p99 "
                             "and p50), exactly as a design's `inference.targets`.")
    engine: Engine = Field(default_factory=Engine, description="Serving-engine settings, as in a design.")


class Networks(_Model):
    inband: Fabric | None = Field(None, description="In-band (frontend) network copied into every design.")
    oob: Fabric | None = Field(None, description="Out-of-band network copied into every design.")
    storage: Fabric | None = Field(None, description="Storage fabric copied into every design.")


class Constraints(_Model):
    servers: list[CatalogId] = Field(min_length=1, max_length=32, description="Servers the cluster may be "
                                     "built from (the GPU follows from the server).")
    site: Site = Field(description="Rack (power budget, cooling, model) and facility, as a design's `site:`; "
                       "servers per rack are chosen as the most the rack rules (FAC001-FAC003) allow.")
    fabrics: dict[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)], Fabric] = Field(
        default_factory=dict, max_length=16, description="Compute-fabric options by name, each a design "
        "`fabrics.compute` block (type, speed, topology, switches).")
    without_fabric: bool = Field(False, description="Also try designs with no compute fabric (an inference fleet "
                                 "whose replicas fit in one server needs none); implied when `fabrics` is empty.")
    networks: Networks = Field(default_factory=Networks, description="Other networks every design gets.")
    storage: Storage | None = Field(None, description="Shared storage every design gets (as in a design).")
    costs: Costs | None = Field(None, description="Prices, spares and TCO inputs every design gets.")
    max_gpus: Count | None = Field(None, description="Most GPUs the cluster may have (the GPU budget).")
    budget_usd: Annotated[float, Field(gt=0, le=1e13)] | None = Field(
        None, description="Most capex (the BOM total) the cluster may cost; a design with unpriced lines is "
        "rejected when a budget is set.")
    site_power_kw: Positive | None = Field(None, description="Most facility power (IT x PUE, the BOM's "
                                           "facility_kw) the site can deliver.")


class Search(_Model):
    """The degrees the search tries (docs/planning.md); each list is bounded."""

    tp: Degrees | None = Field(None, description="Tensor-parallel degrees (default: powers of two up to the NVLink "
                               "domain).")
    pp: Degrees | None = Field(None, description="Pipeline-parallel degrees (default: training 1, 2, 4, 8, 16; "
                               "inference 1, 2).")
    cp: Degrees | None = Field(None, description="Context-parallel degrees, training (default: 1).")
    ep: Degrees | None = Field(None, description="Expert-parallel degrees, MoE models (default: 1 and the powers "
                               "of two up to the experts).")


class SizingRequest(_Model):
    """A clusterplan sizing request: a workload and the constraints its cluster must meet."""

    api_version: Literal["clusterplan/v1"] = Field(alias="apiVersion", description="Format version.")
    kind: Literal["SizingRequest"] = Field(description="Always SizingRequest.")
    metadata: Metadata = Field(description="Name (used to name the generated designs) and owner.")
    training: TrainingWorkload | None = Field(None, description="A training job (give this or `inference`).")
    inference: InferenceWorkload | None = Field(None, description="A serving load (give this or `training`).")
    constraints: Constraints = Field(description="What the cluster may be built from and its limits.")
    search: Search = Field(default_factory=Search, description="The parallel degrees to try.")
    top: Annotated[int, Field(ge=1, le=20)] = Field(3, description="Designs shown per objective.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_enum_values=True,
                              title="clusterplan sizing request")


def read_request(path: FsPath, display: str) -> SizingRequest:
    """The request in `path`; raises DesignError with every problem, each at its line."""
    loaded = load_yaml(read_text(path, display), display)
    if isinstance(loaded.data, dict) and loaded.data.get("apiVersion", API_VERSION) != API_VERSION:
        raise DesignError([Diagnostic("SIZ001", f"apiVersion {loaded.data['apiVersion']!r} is not supported",
                                      display, *loaded.where(("apiVersion",)), hint=f"use {API_VERSION}")])
    try:
        request = SizingRequest.model_validate(loaded.data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = tuple(p for p in err["loc"] if isinstance(p, str | int))
            problems.append(Diagnostic("SIZ001", f"{format_path(where)}: {err['msg']}", display,
                                       *loaded.where(where), where, "see docs/planning.md"))
        raise DesignError(problems) from None
    work = (request.training, request.inference)
    if sum(w is not None for w in work) != 1:
        raise DesignError([Diagnostic("SIZ002", "give exactly one of `training:` or `inference:`", display,
                                      hint="a request sizes one workload")])
    if request.training and request.training.deadline_days is None and request.constraints.max_gpus is None:
        raise DesignError([Diagnostic("SIZ002", "a training request needs `training.deadline_days` or "
                                      "`constraints.max_gpus`", display, *loaded.where(("training",)),
                                      ("training",), "say by when it must finish, or how many GPUs you have")])
    if request.training and (not request.constraints.fabrics or request.constraints.without_fabric):
        raise DesignError([Diagnostic("SIZ002", "a training cluster needs a compute fabric: list its options and "
                                      "leave `without_fabric` off",
                                      display, *loaded.where(("constraints",)), ("constraints", "fabrics"),
                                      "add `constraints.fabrics: {name: {type, speed_gbps, tiers}}`")])
    return request


def request_schema() -> dict[str, object]:
    from validator.read.schema import _no_null_generator

    schema = SizingRequest.model_json_schema(by_alias=True, schema_generator=_no_null_generator())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": REQUEST_SCHEMA_ID, **schema}
