"""Typed models of the JSON outputs whose schemas under schemas/ are generated from them (the list:
validator/emit/schemas.py; `clusterplan schema --check` compares): the validation report (`validate
--format json`), what a design resolves to (`describe`) and the topology (`topology`, both views); the
failure domains and the bill of materials in validator/emit/output_models_plan.py. A field added to an
output is added to its model, and the schema regenerated."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class _Out(BaseModel):
    """An output record: every key required (null where unknown), no other key allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Open(BaseModel):
    """An output record that may grow keys (the BOM's totals, power and TCO): the keys listed are required."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


Severity = Literal["error", "warning", "info"]
Count = Annotated[int, Field(ge=1)]
NonNeg = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0, le=1)]


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
