"""Typed models of the JSON outputs whose schemas under schemas/ are generated from them (`clusterplan
schema --check` compares): the validation report (`validate --format json`), what a design resolves to
(`describe --format json`), the topology (`topology --format json`, both views) and the failure domains
(`failures --format json`). A field added to an output is added here, and the schema regenerated."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://clusterplan.dev/schemas/"


class _Out(BaseModel):
    """An output record: every key required (null where unknown), no other key allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


Severity = Literal["error", "warning", "info"]
Count = Annotated[int, Field(ge=1)]


class Tool(_Out):
    name: Literal["clusterplan"]
    version: str


class Finding(_Out):
    rule: str = Field(pattern=r"^[A-Z]{3}[0-9]{3}$")
    slug: str
    severity: Severity
    message: str = Field(description="What is wrong, with the computed evidence")
    file: str
    line: Count
    col: Count
    path: str = Field(description="Key path of the value to change")
    hint: str = Field(description="What to do")
    fingerprint: str = Field(description="Stable across line moves: rule + file + key path")
    waived: bool
    waiver_reason: str | None


class FileReport(_Out):
    file: str
    passed: bool = Field(description="No unwaived finding at or above fail_on")
    findings: list[Finding]


class Summary(_Out):
    designs: int
    failed: int
    errors: int
    warnings: int
    info: int
    waived: int = Field(description="Findings silenced by a valid waiver")


class Report(_Out):
    """The validation report. Version 1: fields are only added, never renamed or removed."""

    model_config = ConfigDict(title="clusterplan validate --format json")

    version: Literal[1]
    tool: Tool
    fail_on: Severity
    files: list[FileReport]
    summary: Summary


class Racks(_Out):
    gpu: int
    network: int
    total: int
    halls: Count = Field(description="Data halls the racks fill")


class NvlinkDomains(_Out):
    gpus_per_domain: int
    count: int
    racks_per_domain: Count


class ItPower(_Out):
    """IT power of servers and switches in kW; null where a catalog figure is unknown"""

    servers: float | None
    switches: float | None
    total: float | None


class Tier(_Out):
    role: Literal["leaf", "spine", "core"]
    switch: str
    count: Count = Field(description="Switches of the tier over every plane")
    ports_down: int = Field(description="Ports per switch facing the tier below")
    ports_up: int = Field(description="Ports per switch facing the tier above")
    speed_down_gbps: float
    speed_up_gbps: float
    links_down: int = Field(description="Links from below, over the whole tier")
    links_up: int = Field(description="Links to the tier above, over the whole tier")
    per_plane: Count
    oversubscription: str | None = Field(description="Downlink : uplink bandwidth of one switch from its ports "
                                         "(null at the top tier)")
    placement: Literal["rack", "row", "central"]


class LinkGroup(_Out):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    count: int
    speed_gbps: float


class FabricView(_Out):
    type: Literal["infiniband", "roce", "ethernet"]
    topology: Literal["rail-optimized", "fat-tree", "rail-only"]
    speed_gbps: float
    rails: Count
    scalable_units: int | None
    tiers: list[Tier] = Field(min_length=1)
    links: int = Field(description="Every cable of the fabric")
    link_groups: list[LinkGroup]
    planes: Count = Field(description="Independent planes; tier counts are totals over them")
    servers_per_scalable_unit: int | None
    leaves_per_rail: Count = Field(description="Leaves of one rail in one SU (a rail group)")
    pods: int | None = Field(description="Pods of a three-tier fabric (per plane)")


class Describe(_Out):
    """What a design resolves to. Version 1 (fabric model v2: planes, rail groups, pods, placement)."""

    model_config = ConfigDict(title="clusterplan describe --format json")

    version: Literal[1]
    name: str
    file: str
    kind: Literal["TrainingCluster", "InferenceFleet"]
    gpu: str = Field(description="GPU catalog id")
    gpus: Count
    server: str = Field(description="Server catalog id")
    servers: Count
    servers_per_rack: Count
    racks: Racks
    nvlink_domains: NvlinkDomains
    fabrics: dict[Literal["compute", "storage", "inband", "oob"], FabricView]
    switches: int = Field(description="Switches over all fabrics")
    it_power_kw: ItPower


class Node(_Out):
    name: str
    function: str = Field(description="server, leaf, spine, core, storage, rack-system or an appliance's name")
    fabric: str | None = Field(description="the fabric a switch belongs to; null for endpoints")
    model: str
    rack: str | None
    ru: int | None


class Link(_Out):
    fabric: str
    a: str = Field(description="lower end (server, appliance, leaf, spine)")
    a_port: str
    z: str
    z_port: str
    speed_gbps: float = Field(gt=0)


class DevicesView(_Out):
    """view devices: every device and every link with its ports (the DOT's nodes and edges)"""

    version: Literal[1]
    view: Literal["devices"]
    name: str
    file: str
    fabrics: list[str]
    nodes: list[Node]
    links: list[Link]


class Unit(_Out):
    first: int
    last: int
    servers_each: int


class Group(_Out):
    id: str
    group: str
    label: str


class Bundle(_Out):
    a: str
    z: str
    links: float = Field(ge=0, description="links of the bundle (per plane for a multi-plane fabric)")
    speed_gbps: float


class OverviewView(_Out):
    """view overview: groups of devices and bundles of links with counts, repeated units collapsed"""

    version: Literal[1]
    view: Literal["overview"]
    name: str
    unit: Literal["SU", "group"]
    units: list[Unit]
    nodes: list[Group]
    edges: list[Bundle]


class Topology(RootModel[Annotated[DevicesView | OverviewView, Field(discriminator="view")]]):
    """The topology of a design. Version 1. view devices: every device and every link with its ports (the
    DOT's nodes and edges); view overview: groups of devices and bundles of links with counts, repeated
    units collapsed."""

    model_config = ConfigDict(title="clusterplan topology --format json", defer_build=True)


NonNeg = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]


class TierLoss(_Out):
    fabric: str
    tier: Literal["endpoint-leaf", "leaf-spine", "spine-core"]
    links_lost: NonNeg
    links: NonNeg
    gbps_lost: float = Field(ge=0)
    gbps: float = Field(ge=0)
    share_lost: Share | None


class TrainingImpact(_Out):
    status: Literal["unaffected", "degraded", "interrupted", "blocked"] = Field(
        description="degraded: runs on, every collective at the slowest path; interrupted: restarts from its last "
        "checkpoint on spare servers; blocked: cannot run at its data-parallel degree until the part is replaced")
    job_gpus: int
    gpus_lost: int
    dp: int
    dp_after: int = Field(description="data-parallel degree that fits on the servers left")
    bandwidth_left_share: Share | None = Field(description="least share of compute-fabric bandwidth on the job's "
                                               "paths")
    storage_bandwidth_left_share: Share | None = Field(description="the same on the storage fabric (checkpoints "
                                                       "and data reads)")


class PoolImpact(_Out):
    pool: Literal["fleet", "prefill", "decode"]
    planned: int
    lost: int
    needed: NonNeg | None


class InferenceImpact(_Out):
    replicas_lost: NonNeg
    meets_target: bool | None = Field(description="the replicas left carry the target load at the SLOs; null: no "
                                      "target, or no replica count would")
    pools: list[PoolImpact]
    note: str


class SparesOut(_Out):
    count: NonNeg | None
    basis: str


class FailureClass(_Out):
    model_config = ConfigDict(populate_by_name=True)

    class_: str = Field(alias="class")
    kind: Literal["switch", "oob-switch", "link", "server", "nvlink-domain", "gpu-rack", "network-rack",
                  "storage-rack", "cdu", "rear-door", "storage-node", "pdu"]
    fabric: str | None
    count: NonNeg
    worst_member: str = Field(description="the member whose failure costs most")
    members_evaluated: NonNeg = Field(description="members tried (a class over 400 is sampled evenly, first and "
                                      "last included)")
    design_path: str
    gpus_unreachable: NonNeg | None = Field(description="GPUs down or cut off from the workload fabric; null: "
                                            "unknown")
    gpus_down: NonNeg | None
    gpus_cut_off: NonNeg | None
    gpus_without_nic: NonNeg | None = Field(description="GPUs still reachable whose own NIC lost every link")
    gpus_at_risk: NonNeg | None = Field(description="PDU: GPUs that stop unless the other feed carries them")
    bandwidth: list[TierLoss]
    servers_cut_off: dict[str, NonNeg]
    servers_degraded: dict[str, NonNeg]
    endpoints_cut_off: dict[str, dict[str, NonNeg]]
    bandwidth_left_share: Share | None = Field(description="least share of its bandwidth a reachable server keeps "
                                               "on the workload fabric")
    storage_nodes_down: NonNeg
    training: TrainingImpact | None
    inference: InferenceImpact | None
    spares: SparesOut
    note: str


class SinglePoint(_Out):
    severity: Literal["warning", "info"]
    component: str
    member: str
    message: str
    path: str
    line: Count
    col: Count
    fix: str


class Failures(_Out):
    """Failure domains of a design. Version 1. For each class of component, the failure of its worst member;
    null means unknown."""

    model_config = ConfigDict(title="clusterplan failures --format json")

    version: Literal[1]
    name: str
    file: str
    kind: Literal["training", "inference"]
    gpus: int
    servers: int
    workload_fabric: str | None
    classes: list[FailureClass]
    single_points_of_failure: list[SinglePoint]


def output_schema(model: type[BaseModel], file: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of an output model, as written to schemas/<file>."""
    schema = model.model_json_schema(by_alias=True, ref_template="#/$defs/{model}", mode="serialization")
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_BASE + file, **schema}


OUTPUT_MODELS: dict[str, type[BaseModel]] = {"report.schema.json": Report, "describe.schema.json": Describe,
                                             "topology.schema.json": Topology, "failures.schema.json": Failures}
