"""The catalog entry types: what rules, estimator and BOM need of each part, plus its `source`.

Unknown figures are `None`: a consumer that needs one says so and names the field to set in a
design catalog override; it never guesses. The schemas are built when first needed (`defer_build`): the
built-in entries are constructed without validation (validator/resolve/trusted.py).
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Source = Annotated[str, Field(min_length=8, description="Datasheet, paper or reference architecture.")]
Price = Annotated[float, Field(ge=0, description="USD. Built-in entries carry no price: prices live in price "
                               "books (validator/resolve/catalog/data/prices/); a design catalog may set one "
                               "for its own parts.")] | None
Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=100)]
PowerBasis = Literal["typical", "max"]
Top = Literal["finned", "flat"]
Protocol = Literal["infiniband", "ethernet"]
LinkProtocols = Annotated[list[Protocol], Field(min_length=1)] | None
PROTOCOLS_HELP = ("The link protocols the part carries, as its vendor lists them (NVIDIA's NDR/400GbE twin-port "
                  "parts: both; XDR 1.6T parts: infiniband): the media choice gives a link only parts that carry "
                  "its fabric's protocol (null: not stated, no objection; every built-in part states it)")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    id: Id
    name: str
    source: Source


class Gpu(_Entry):
    vendor: str
    form_factor: Literal["sxm", "pcie", "oam", "superchip"]
    memory_gb: float = Field(gt=0)
    memory_type: str
    memory_bandwidth_tbs: float = Field(gt=0)
    tflops: dict[Literal["fp32", "bf16", "fp16", "fp8", "fp4", "int8"], float]
    tdp_w: float = Field(gt=0)
    scaleup_bandwidth_gbs: float = Field(ge=0, description="NVLink (or equivalent) bandwidth per GPU, "
                                         "both directions summed, GB/s")
    scaleup_domain_max: int = Field(ge=1)
    price_usd: Price = None


class NicSlot(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    model: Id
    count: int = Field(ge=1)


class ServerLinks(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    nic: Id
    count: int = Field(ge=1, description="Cables from one server to this network")
    speed_gbps: float = Field(gt=0)
    cages: int | None = Field(None, ge=1, description="Physical cages carrying these links (twin-port OSFP)")
    ports_per_cage: int = Field(1, ge=1)


class RackSystem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    servers_per_rack: int = Field(ge=1)
    extra_rack_units: int = Field(ge=0)
    racks_per_domain: int = Field(1, ge=1, description="Racks one NVLink domain spans (2 for NVL36x2)")
    inter_rack_nvlink_cables: int | None = Field(None, ge=0, description="NVLink cables between the racks of "
                                                 "one domain (null: not published)")
    mgmt_ports: int = Field(0, ge=0, description="Out-of-band management ports of the rack system itself "
                            "(NVLink switch trays, power shelves), per rack")
    mgmt_switches: int = Field(0, ge=0, description="Out-of-band (management) switches built into the rack "
                               "system, counted in extra_rack_units")
    parts: list[NicSlot] = Field(default_factory=list, description="Facility entries built into each rack of "
                                 "the system (NVLink switch trays, power shelves), per rack; their power and "
                                 "price are in the compute trays' share")
    includes_rack: bool = Field(False, description="The system is sold as whole racks and its price includes the "
                                "rack cabinet (NVL72): the BOM buys no cabinet for its GPU racks")
    description: str
    source: Source


class Server(_Entry):
    gpu: Id
    gpus: int = Field(ge=1)
    nvlink_domain_gpus: int = Field(ge=1)
    rack_units: int = Field(ge=1)
    max_power_w: float | None = Field(None, gt=0)
    power_basis: PowerBasis | None = Field(None, description="What max_power_w is: a rated maximum (max, the "
                                           "default) or a typical or planning figure (typical, e.g. a rack's "
                                           "approximate draw divided by its trays)")
    weight_kg: float | None = Field(None, gt=0)
    cooling: Literal["air", "liquid"]
    nics: list[NicSlot]
    links: dict[Literal["compute", "storage", "inband", "oob"], ServerLinks]
    rack_system: RackSystem | None = None
    price_usd: Price = None

    @model_validator(mode="after")
    def _one_oob_port(self) -> "Server":
        """The out-of-band network is laid out with one management (BMC) port per server (expand/oob.py,
        derive/links.py, derive/cages.py): a second would be left out of the cabling plan and the out-of-band
        leaves' sizing, so it is refused rather than counted as one."""
        oob = self.links.get("oob")
        if oob is not None and oob.count != 1:
            raise ValueError(f"links.oob.count is {oob.count}: clusterplan lays out one out-of-band (BMC) port per "
                             "server, so the other ports would be missing from the cabling plan and the BOM; set "
                             "count: 1 (a second management port per server is not modelled)")
        return self


class Nic(_Entry):
    category: Literal["nic", "dpu", "bmc"]
    ports: int = Field(ge=1)
    speed_gbps: float = Field(gt=0)
    speeds_gbps: list[float] = Field(default_factory=list, description="Slower port speeds the adapter's manual "
                                     "says a port also runs at (a 200G port at 100G): a fabric at one of them "
                                     "is not a speed mismatch")
    form_factor: str
    host_interface: str
    protocols: list[Protocol]
    top: Top | None = Field(None, description="OSFP cages: the module top the NIC takes (flat, RHS)")
    breakout: dict[int, int] = Field(default_factory=dict, description="port speed Gb/s -> links one port "
                                     "gives at that speed, where the NIC splits a port (ConnectX-8: {400: 2})")
    power_w: float | None = Field(None, gt=0)
    power_basis: PowerBasis | None = Field(None, description="Whether power_w is a typical or a maximum figure")
    price_usd: Price = None


class PortGroup(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    cages: int = Field(ge=1)
    form_factor: str = Field(description="The cage: OSFP, QSFP-DD, QSFP112, QSFP56, QSFP28, SFP28, RJ45")
    top: Top | None = Field(None, description="OSFP cages: the module top the cage takes (finned IHS in "
                            "air-cooled switches, flat RHS in NICs and liquid-cooled switches)")
    ports_per_cage: dict[int, int] = Field(description="port speed Gb/s -> logical ports per cage")


class Switch(_Entry):
    vendor: str
    technology: Literal["infiniband", "ethernet"]
    asic: str
    port_groups: list[PortGroup] = Field(min_length=1)
    mgmt_ports: int = Field(ge=0)
    rack_units: int | None = Field(None, ge=1)
    power_typical_w: float | None = Field(None, gt=0)
    power_max_w: float | None = Field(None, gt=0)
    power_max_includes_optics: bool | None = Field(None, description="power_max_w is with every cage holding "
                                                   "an active module or cable (null: not stated)")
    cooling: Literal["air", "liquid"] = "air"
    weight_kg: float | None = Field(None, gt=0)
    latency_ns: float | None = Field(None, gt=0)
    buffer_mb: float | None = Field(None, gt=0)
    os: Literal["sonic", "eos", "cumulus", "opensm"]
    sonic_platform: str | None = Field(None, description="SONiC platform directory (sonic-buildimage device/)")
    sonic_hwsku: str | None = Field(None, description="SONiC default HWSKU")
    price_usd: Price = None

    def ports_at(self, speed_gbps: float) -> int:
        """Logical ports the switch offers at a speed (all cages split to that speed)."""
        return sum(g.cages * g.ports_per_cage.get(int(speed_gbps), 0) for g in self.port_groups)


class Transceiver(_Entry):
    form_factor: str
    top: Top | None = Field(None, description="OSFP modules: finned (IHS) or flat (RHS) top")
    ports: int = Field(ge=1)
    speed_gbps: float = Field(gt=0)
    media: Literal["mmf", "smf", "smf-duplex"]
    reach_m: float = Field(gt=0)
    connector: str
    power_w: float | None = Field(None, gt=0)
    power_basis: PowerBasis | None = Field(None, description="Whether power_w is a typical or a maximum figure")
    end: Literal["switch", "node", "any"]
    lane_gbps: float | None = Field(None, gt=0, description="Signalling rate of one lane (100 for 100G-PAM4, 200 "
                                    "for 200G-PAM4): the two modules of a link must have the same (200G-PAM4 parts "
                                    "cannot downshift); null: not known, no objection")
    protocols: LinkProtocols = Field(None, description=PROTOCOLS_HELP)
    price_usd: Price = None


class Cable(_Entry):
    type: Literal["dac", "acc", "aoc", "fiber", "cat6"]
    media: Literal["mmf", "smf", "smf-duplex"] | None = None
    speed_gbps: float = Field(gt=0)
    form_factor: str | None = None
    top: Top | None = Field(None, description="OSFP ends: finned (IHS) or flat (RHS) top (a splitter: its single end)")
    split: bool = Field(False, description="A splitter: one plug carrying every link at the switch end, one plug "
                        "per link at the other (a straight cable has one plug per end carrying every link)")
    split_top: Top | None = Field(None, description="The top of the plugs at the lower (adapter) end when it "
                                  "differs from `top`: a splitter's per-link plugs, a flat-to-finned cable")
    links_per_cable: int = Field(ge=1)
    reach_m: float = Field(gt=0)
    lengths_m: list[float] = Field(min_length=1)
    power_w: float | None = Field(None, ge=0, description="Power of one cable, all its ends together, maximum; 0 "
                                  "for passive fiber and Cat6 (null: not published)")
    protocols: LinkProtocols = Field(None, description=PROTOCOLS_HELP)
    price_usd: Price = None


class Facility(_Entry):
    category: Literal["rack", "pdu", "cdu", "rdhx", "power-shelf", "nvlink-switch-tray"]
    rack_units: int | None = Field(None, ge=1)
    capacity_kw: float | None = Field(None, gt=0)
    power_w: float | None = Field(None, gt=0, description="Power drawn (NVLink switch trays; null: not published)")
    power_basis: PowerBasis | None = None
    price_usd: Price = None


class Moe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    experts: int = Field(ge=1)
    top_k: int = Field(ge=1)
    shared_experts: int = Field(ge=0)
    expert_ffn_hidden: int = Field(ge=1)
    dense_layers: int = Field(ge=0)
    active_params_b: float = Field(gt=0)


class Mla(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    kv_lora_rank: int = Field(ge=1)
    q_lora_rank: int | None = Field(None, ge=1, description="Rank of the compressed query (DeepSeek-V2 and "
                                    "V3, Kimi K2: 1536); null: the query projection is not compressed")
    qk_rope_head_dim: int = Field(ge=1)
    qk_nope_head_dim: int = Field(ge=1)
    v_head_dim: int = Field(ge=1)


class LlmModel(_Entry):
    params_b: float = Field(gt=0)
    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    ffn_hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int | None = Field(None, ge=1)
    vocab: int = Field(ge=1)
    max_context: int = Field(ge=1)
    tied_embeddings: bool
    mlp: Literal["gelu", "swiglu"] = Field(description="gelu: 2 FFN matrices (GPT); swiglu: 3 (Llama)")
    moe: Moe | None = None
    mla: Mla | None = None

    @property
    def dim_per_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def active_params_b(self) -> float:
        return self.moe.active_params_b if self.moe else self.params_b


ENTRY_TYPES: dict[str, type[_Entry]] = {
    "gpu": Gpu, "server": Server, "nic": Nic, "switch": Switch, "transceiver": Transceiver,
    "cable": Cable, "facility": Facility, "model": LlmModel,
}


def catalog_file_schema() -> dict[str, object]:
    """JSON Schema of a catalog file: `kind:` plus a list of `entries:` of that kind."""
    defs: dict[str, object] = {}
    files = []
    for kind, model in ENTRY_TYPES.items():
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[model.__name__] = schema
        files.append({"type": "object", "additionalProperties": False, "required": ["kind", "entries"],
                      "properties": {"kind": {"const": kind},
                                     "entries": {"type": "array", "items": {"$ref": f"#/$defs/{model.__name__}"}}}})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://clusterplan.dev/schemas/clusterplan-catalog.schema.json",
            "title": "clusterplan catalog file", "oneOf": files, "$defs": dict(sorted(defs.items()))}
