"""The design model (format version 1). The single source of truth for the design schema.

`schemas/clusterplan-design.schema.json` is generated from these classes by `clusterplan schema`;
every field's description becomes an editor tooltip and a row of docs/design-format.md.
Fields left out take their value from the catalog or from documented data files (validator/data/),
never from a constant written here.
"""

from datetime import date
from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from validator.read.enums import Cooling, Kind, Precision, Recompute, Technology, TopologyKind
from validator.read.fields import Count, Model, NonNegCount, Positive
from validator.read.inference import Inference
from validator.read.lossless import Lossless
from validator.read.names import (
    IDENTIFIER_RULE,
    RESERVED_NAMES,
    CatalogId,
    DeviceName,
    FilePath,
    Identifier,
    Money,
    RuleId,
    ThresholdName,
)

API_VERSION = "clusterplan/v1"

# ---------------------------------------------------------------- metadata and site


class Metadata(Model):
    name: Identifier = Field(description="Short name of the cluster, unique in the repo (" + IDENTIFIER_RULE + ").")
    description: str | None = Field(None, max_length=2000, description="What the cluster is for.")
    owner: str | None = Field(None, max_length=200, description="Team or person who owns this design.")


class Layout(Model):
    racks_per_row: Count | None = Field(None, description="Racks in one row; racks fill rows in floor order "
                                        "(default from validator/data/layout.yaml).")
    rows_per_hall: Count | None = Field(None, description="Rows in one data hall; rows fill halls in order "
                                        "(default from validator/data/layout.yaml).")
    rack_width_m: Positive | None = Field(None, description="Rack width (pitch along a row) in metres.")
    row_pitch_m: Positive | None = Field(None, description="Distance between row centres in metres.")
    hall_spacing_m: Positive | None = Field(None, description="Cable route between the entrances of two "
                                            "neighbouring halls, in metres.")
    hall_sides: Literal[1, 2] | None = Field(
        None, description="Halls along one side of the corridor that joins their entrances (1), or on both "
        "sides of it, facing in pairs (2: halls 1 and 2 face each other, then 3 and 4, ...), which halves the "
        "corridor a site of many halls spans; a run between halls passes `hall_spacing_m` per pair along the "
        "corridor and one more across it (default from validator/data/layout.yaml: 1).")
    slack_per_end_m: Annotated[float, Field(ge=0, le=100)] | None = Field(
        None, description="Service loop added at each end of a run, in metres.")


class Rack(Model):
    model: CatalogId = Field("rack-48u", description="Rack catalog id (rack units come from the catalog).")
    power_budget_kw: Positive = Field(description="Power the facility can deliver to one rack, in kW.")
    cooling: Cooling = Field(description="How heat leaves the rack: air, rear-door heat exchanger, or "
                             "direct liquid cooling with a CDU.")
    rear_door: CatalogId | None = Field(None, description="Rear-door heat exchanger catalog id (cooling: rear-door).")
    cdu: CatalogId | None = Field(None, description="Coolant distribution unit catalog id (cooling: liquid).")
    racks_per_cdu: Count | None = Field(None, description="GPU racks served by one CDU (cooling: liquid; "
                                        "default: as many as its capacity allows).")
    pdu: CatalogId | None = Field(None, description="Rack PDU catalog id; PDUs per rack follow from the budget.")


class Site(Model):
    name: Identifier | None = Field(None, description="Site (data centre) name used in the cable run list and "
                                    "rack elevations (default: the design's name; " + IDENTIFIER_RULE + ").")
    rack: Rack = Field(description="The GPU rack: power budget, cooling and model.")
    pue: Annotated[float, Field(ge=1, le=5)] | None = Field(
        None, description="Power usage effectiveness of the facility (default from data/defaults.yaml).")
    electricity_usd_per_kwh: Annotated[float, Field(ge=0, le=10)] | None = Field(
        None, description="Electricity price in USD per kWh, for yearly energy cost.")
    layout: Layout | None = Field(None, description="Row and rack layout, for cable lengths.")


# ---------------------------------------------------------------- compute


class Compute(Model):
    server: CatalogId = Field(description="Server catalog id, e.g. dgx-h100, gb200-nvl72-tray.")
    count: Count = Field(description="Number of GPU servers (for NVL72: compute trays).")
    servers_per_rack: Count = Field(description="GPU servers in one rack.")
    nvlink_domain_gpus: Count | None = Field(
        None, description="GPUs in one NVLink domain (default from the server: 8 for HGX, 72 for NVL72).")
    nvlink_domain_racks: Count | None = Field(
        None, description="Racks one NVLink domain spans (default from the server's rack system: 1 for NVL72, "
        "2 for NVL36x2); the racks of a domain stand side by side.")


# ---------------------------------------------------------------- fabrics


Ratio = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?:[0-9]+(\.[0-9]+)?$", max_length=20)]


class Tier(Model):
    switch: CatalogId = Field(description="Switch catalog id for this tier.")
    count: Count | None = Field(None, description="Switches in this tier, per plane (default: sized for the "
                                "fabric, spines and cores so that every switch pair carries the same number "
                                "of links).")
    downlinks: Count | None = Field(None, description="Ports per switch facing the tier below "
                                    "(default: what the taper leaves of the ports; half of them at 1:1).")
    uplinks: NonNegCount | None = Field(None, description="Ports per switch facing the tier above "
                                        "(default: from the downlinks and the taper).")
    uplink_speed_gbps: Positive | None = Field(None, description="Speed of the uplinks in Gb/s (default: the "
                                               "fabric speed; on Ethernet, the fastest breakout speed at which one "
                                               "spine layer reaches every leaf when the fabric speed does not). On "
                                               "the spines of three tiers: the spine-core links, e.g. 800G on 400G "
                                               "spines, half the ports on unsplit long-reach modules.")
    oversubscription: Ratio | None = Field(
        None, description="Taper of this tier as downlink bandwidth : uplink bandwidth, e.g. '1:1' (non-blocking) "
        "or '7:1' (what Meta writes as 1:7 at its aggregation tier). Default: the fabric's `oversubscription`.")
    placement: Literal["rack", "row", "central"] | None = Field(
        None, description="Where the tier's switches stand: rack (top-of-rack, in the rack of the servers they "
        "serve), row (network racks beside each scalable unit's GPU racks) or central (network racks in the "
        "middle of the floor). Default: leaves of a rail-optimized fabric in row racks, leaves of a fat-tree "
        "with a spine tier and out-of-band leaves in the rack, spines, cores and single-tier leaves central.")

    def up_speed(self, speed: float) -> float:
        """The speed of this tier's uplinks on a fabric of `speed` Gb/s (`uplink_speed_gbps` or the fabric's)."""
        return float(self.uplink_speed_gbps or speed)


class Tiers(Model):
    leaf: Tier = Field(description="Leaf (rail / top-of-rack) switches that servers connect to.")
    spine: Tier | None = Field(None, description="Spine switches; omit for a single-switch-layer fabric.")
    core: Tier | None = Field(None, description="Core (super-spine) switches, when one spine layer cannot reach "
                              "every leaf. Added automatically when needed if `spine` is given.")


class ScalableUnit(Model):
    servers: Count | None = Field(None, description="Servers (NVL72: compute trays) per scalable unit.")
    racks: Count | None = Field(None, description="GPU racks per scalable unit (servers = racks x "
                                "servers_per_rack), e.g. 8 NVL72 racks.")


class Growth(Model):
    """Build a fabric for more than it has (docs/design-format.md, "Sized from what is built")."""

    scalable_units: Count = Field(description="Build the fabric for this many full scalable units: every leaf "
                                  "gets uplinks for all its downlink ports (a partial SU filled later needs no new "
                                  "cable) and spines and cores get the ports of this many SUs' leaves. Leaves are "
                                  "built for the SUs that have servers. The extra hardware is its own BOM line.")


class Pod(Model):
    servers: Count | None = Field(None, description="Servers per pod (zone): the leaves of a pod share a set of "
                                  "spines; pods meet at the core (aggregation) tier.")
    gpus: Count | None = Field(None, description="GPUs per pod (zone), e.g. 3072 for a Meta AI zone.")


class Zones(Model):
    racks: Count = Field(description="GPU racks per zone (whole compute groups, with their network racks; the "
                         "central racks form a zone of their own).")


class ExtraEndpoint(Model):
    name: DeviceName = Field(description="What it is, e.g. ufm (" + IDENTIFIER_RULE + "; not " +
                             ", ".join(RESERVED_NAMES) + ").")
    count: Count = Field(1, description="How many such devices.")
    ports: Count = Field(description="Leaf ports each one uses.")
    power_w: Positive | None = Field(None, description="Power per device in W (null: unknown, and the IT power "
                                     "total is unknown with it).")
    price_usd: Money | None = Field(None, description="Price per device (null: the BOM line is unpriced).")


MediaKind = Literal["auto", "dac", "acc", "aoc", "mmf", "smf", "smf-duplex"]


class FabricMedia(Model):
    servers: MediaKind = Field("auto", description="Media from servers to leaves: auto picks copper in the rack, "
                               "else optics that reach.")
    switches: MediaKind = Field("auto", description="Media between switch tiers.")


class Fabric(Model):
    type: Technology = Field(description="infiniband, roce (lossless Ethernet) or ethernet (plain).")
    speed_gbps: Positive = Field(description="Link speed from servers to leaves, in Gb/s.")
    topology: TopologyKind = Field(TopologyKind.fat_tree, description="rail-optimized (NIC i of every server to "
                                   "the rail-i leaf, spines join the rails), rail-only (each rail its own network, "
                                   "no spine joins them; cross-rail traffic rides NVLink) or a plain fat-tree.")
    tiers: Tiers = Field(description="Switch tiers, leaf first.")
    planes: Annotated[int, Field(ge=1, le=16)] = Field(
        1, description="Independent copies of the fabric that never meet (multi-plane); each server link is on "
        "one plane. Tier counts are per plane.")
    plane_of: Literal["nic", "port"] = Field(
        "nic", description="What is spread over the planes: whole NICs (NIC i on plane i mod planes, as "
        "DeepSeek's 8-plane fabric) or the ports of each NIC (port p of every NIC on plane p, as dual-plane "
        "ConnectX-8 designs).")
    attachment: Literal["single", "dual"] = Field(
        "single", description="dual: the two ports of each NIC go to two different leaves (non-stacked dual-ToR, "
        "as Alibaba HPN); single: a NIC's ports may share a leaf.")
    scalable_unit: ScalableUnit | None = Field(
        None, description="Size of a scalable unit (SU): leaves are built for whole SUs, as NVIDIA's SuperPOD "
        "reference architectures do. Default: the servers one leaf serves.")
    scalable_unit_servers: Count | None = Field(
        None, description="Servers per scalable unit (SU); same as `scalable_unit: {servers: N}` (kept for "
        "designs written before `scalable_unit`).")
    growth: Growth | None = Field(
        None, description="Build for growth (docs/design-format.md, Growth). Default: none; leaf uplinks follow "
        "the downlinks in use and spines and cores the leaves that exist.")
    planned_scalable_units: Count | None = Field(
        None, description="Same as `growth: {scalable_units: N}` (kept for designs written before `growth`).")
    pod: Pod | None = Field(None, description="Pod (zone) size of a three-tier fabric: leaves of a pod share "
                            "spines, pods meet at the core. Default: one SU (or one rail group of an SU).")
    zones: Zones | None = Field(None, description="Out-of-band fabric only: cut the management network into zones "
                                "of about this many GPU racks, each its own leaf-spine(-core) tree standing in the "
                                "zone, its top tier routed to the site's management network (not in the design). "
                                "For a site beyond one tree of management switches. Default: one zone.")
    extra_endpoints: list[ExtraEndpoint] = Field(default_factory=list,
                                                 description="Non-server devices on leaf ports (e.g. UFM).")
    oversubscription: Ratio | None = Field(
        None, description="Taper of every tier that does not set its own, as downlink : uplink bandwidth; "
        "default '1:1' (non-blocking).")
    lossless: Lossless | None = Field(None, description="PFC/ECN settings (RoCE).")
    congestion_control: CatalogId | None = Field(
        None, description="RDMA on a lossy fabric (no `lossless:`): the congestion control that makes it safe, "
        "one of validator/data/congestion_control.yaml (e.g. uet, srd).")
    media: FabricMedia | None = Field(None, description="Force a cable/optics type; default: chosen by length.")
    nic_to_rail: list[Annotated[int, Field(ge=0, le=1023)]] | None = Field(
        None, description="Rail (leaf index within the SU) that each NIC index is cabled to; "
        "default is NIC i to rail i.")
    adaptive_routing: bool = Field(
        False, description="InfiniBand: also write the configuration of NVIDIA's subnet manager (UFM / MLNX "
        "OpenSM) with adaptive routing (routing_engine ar_updn) beside the upstream OpenSM one "
        "(configs/<fabric>/opensm-nvidia-ar.conf); upstream OpenSM has no adaptive routing engine.")


class Fabrics(Model):
    compute: Fabric | None = Field(None, description="The compute (backend, east-west) fabric between GPUs; an "
                                   "inference fleet whose replicas fit in one server may leave it out.")
    storage: Fabric | None = Field(None, description="The storage fabric.")
    inband: Fabric | None = Field(None, description="The in-band (frontend, north-south) network.")
    oob: Fabric | None = Field(None, description="The out-of-band management network (BMCs and switch "
                               "management ports).")


# ---------------------------------------------------------------- storage


class StorageNodes(Model):
    count: Count = Field(description="Storage servers or appliances.")
    ports: Count = Field(2, description="Storage-fabric ports per storage node.")
    rack_units: Count | None = Field(None, description="Rack units per node.")
    power_w: Positive | None = Field(None, description="Power per node in W.")
    price_usd: Money | None = Field(None, description="Price per node.")


class Storage(Model):
    type: Literal["parallel-fs", "nfs", "object", "none"] = Field(description="parallel-fs (Lustre, GPFS, "
                                                                   "WEKA...), nfs, object or none.")
    capacity_tb: Positive | None = Field(None, description="Usable capacity in TB.")
    read_gbytes_s: Positive | None = Field(None, description="Aggregate read bandwidth in GB/s.")
    write_gbytes_s: Positive | None = Field(None, description="Aggregate write bandwidth in GB/s.")
    nodes: StorageNodes | None = Field(None, description="Storage nodes on the storage fabric.")


# ---------------------------------------------------------------- workloads


class Parallelism(Model):
    tp: Count = Field(1, description="Tensor parallel degree.")
    pp: Count = Field(1, description="Pipeline parallel degree.")
    dp: Count = Field(1, description="Data parallel degree.")
    cp: Count = Field(1, description="Context parallel degree.")
    ep: Count = Field(1, description="Expert parallel degree (MoE); experts are sharded over DP x CP ranks.")
    vpp: Count = Field(1, description="Virtual pipeline stages per rank (interleaved 1F1B).")
    sequence_parallel: bool = Field(True, description="Megatron sequence parallelism with TP.")
    tp_comm_overlap: bool = Field(False, description="TP collectives overlapped with the GEMMs (Transformer Engine "
                                  "userbuffers, torch async TP), as Megatron-Core recipes enable on Hopper and later.")


class Checkpoint(Model):
    write_target_s: Positive = Field(description="A full checkpoint must be written within this time, seconds.")
    interval_minutes: Positive | None = Field(
        None, description="Training time between checkpoints (default: Young's optimum from the write time and "
        "the interruption rate).")
    async_save: bool = Field(False, description="Asynchronous save: training waits only for the copy to host "
                             "memory, not for the storage write.")


class Goodput(Model):
    interruptions_per_gpu_hour: Annotated[float, Field(ge=0, le=1)] | None = Field(
        None, description="Job interruptions per GPU-hour (default: Llama 3's 419 in 54 days on 16,384 GPUs).")
    restart_minutes: Annotated[float, Field(ge=0, le=10_000)] | None = Field(
        None, description="Time from an interruption to training again, before the checkpoint is read (default "
        "from validator/data/reliability.yaml).")


class Training(Model):
    model: CatalogId = Field(description="Model catalog id, e.g. llama3-70b.")
    parallelism: Parallelism = Field(description="TP x PP x DP x CP (x EP inside DP) degrees.")
    sequence_length: Count = Field(description="Tokens per sequence.")
    global_batch: Count = Field(description="Sequences per optimizer step.")
    micro_batch: Count = Field(1, description="Sequences per micro-batch.")
    precision: Precision = Field(Precision.bf16, description="Compute precision of the GEMMs.")
    optimizer: Literal["adam", "sgd"] = Field("adam", description="Optimizer (Adam keeps two fp32 states).")
    zero_stage: Annotated[int, Field(ge=0, le=3)] = Field(
        1, description="ZeRO stage / distributed optimizer: 0 none, 1 optimizer states, 2 + gradients, "
        "3 + parameters (FSDP).")
    dp_comm_overlap: bool = Field(True, description="Overlap the data-parallel gradient reduction and parameter "
                                  "gathers with backward and forward (Megatron --overlap-grad-reduce / "
                                  "--overlap-param-gather, FSDP prefetch).")
    sharding_group: Count | None = Field(
        None, description="HSDP: with zero_stage 3, shard within groups of this many data-parallel ranks and "
        "replicate across groups (default: shard across all DP x CP ranks).")
    recompute: Recompute = Field(Recompute.selective, description="Activation recomputation.")
    recompute_layers: NonNegCount | None = Field(
        None, description="With recompute: full, recompute only this many layers per pipeline stage "
        "(Megatron --recompute-num-layers); default all.")
    activation_offload: Annotated[float, Field(ge=0, le=1)] = Field(
        0.0, description="Share of activation memory offloaded to host memory during forward.")
    pipeline_layers: Annotated[list[NonNegCount], Field(max_length=4096)] | None = Field(
        None, description="Layers on each pipeline stage, first to last (uneven stages, as Megatron-LM's "
        "--decoder-first/last-pipeline-num-layers allow); default: even, the shortfall on the first and last.")
    flash_attention: bool = Field(True, description="Fused attention (no s^2 activation memory).")
    trainable_params_b: Annotated[float, Field(gt=0, le=1e5)] | None = Field(
        None, description="Fine-tuning with frozen weights (LoRA adapters, partial unfreezing): the parameters "
        "trained, billions. Frozen weights keep no gradients or optimizer state, compute no weight gradients "
        "and are never reduced over data parallel. Default: every parameter is trained.")
    mtp_layers: Annotated[int, Field(ge=0, le=8)] = Field(
        0, description="Multi-token prediction modules trained with the model (DeepSeek-V3: 1): each is one more "
        "transformer layer, a 2h x h projection and one more pass through the LM head and loss, on the last "
        "pipeline stage.")
    tokens: Annotated[float, Field(gt=0, le=1e16)] | None = Field(
        None, description="Token budget of the run (for time-to-train), e.g. 15e12.")
    checkpoint: Checkpoint | None = Field(None, description="Checkpoint write-time target and interval.")
    goodput: Goodput | None = Field(None, description="Interruption rate and restart time for goodput and "
                                    "time-to-train (defaults from published large runs).")


# ---------------------------------------------------------------- costs and waivers


class Costs(Model):
    prices_usd: dict[CatalogId, Money] = Field(
        default_factory=dict, description="Unit price overrides by catalog id, USD.")
    spares_pct: dict[Identifier, Annotated[float, Field(ge=0, le=100)]] = Field(
        default_factory=dict, description="Spare percentage by BOM category, e.g. {transceiver: 2}.")
    amortization_years: Positive | None = Field(None, description="Years of straight-line depreciation of the "
                                                "capex, for the TCO and cost per GPU-hour (default in "
                                                "data/defaults.yaml, or tco.depreciation_years in .clusterplan.yaml).")
    support_pct_per_year: Annotated[float, Field(ge=0, le=100)] | None = Field(
        None, description="Yearly support and maintenance as a percentage of capex (default in data/defaults.yaml).")
    utilization: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None, description="Share of the year the GPUs are busy: energy is drawn and cost per GPU-hour counted over "
        "the busy hours (default 1.0).")


class Waiver(Model):
    rule: RuleId = Field(description="Rule ID, e.g. NET002.")
    path: str | None = Field(None, max_length=500, description="Key path the waiver is limited to.")
    reason: str = Field(max_length=2000, description="Why the finding is accepted (mandatory).")
    owner: str = Field(min_length=1, max_length=200, description="Who accepted it.")
    expires: date | None = Field(None, description="Date after which the waiver stops applying (YYYY-MM-DD).")


class Design(Model):
    """A clusterplan design: one cluster and its workload."""

    api_version: Literal["clusterplan/v1"] = Field(alias="apiVersion", description="Format version.")
    kind: Kind = Field(description="TrainingCluster or InferenceFleet.")
    metadata: Metadata = Field(description="Name and owner.")
    catalogs: list[FilePath] = Field(
        default_factory=list, description="Extra catalog files, relative to this design; they add or "
        "override catalog entries.")
    templates: FilePath | None = Field(
        None, description="Directory (relative to this design, inside the repository) of Jinja templates that "
        "override the built-in ones by name, e.g. sonic/config_db.json.j2; rendered in a sandbox.")
    site: Site = Field(description="Racks, power, cooling and facility.")
    compute: Compute = Field(description="GPU servers.")
    fabrics: Fabrics = Field(description="Networks.")
    storage: Storage | None = Field(None, description="Shared storage.")
    training: Training | None = Field(None, description="The training job (kind: TrainingCluster).")
    inference: Inference | None = Field(None, description="The serving workload (kind: InferenceFleet).")
    costs: Costs = Field(default_factory=Costs, description="Prices and spares.")
    thresholds: dict[ThresholdName, Annotated[float, Field(ge=0, le=1e9)]] = Field(
        default_factory=dict, description="Rule threshold overrides by name (see docs/rules.md).")
    severity: dict[RuleId, Literal["error", "warning", "info", "off"]] = Field(
        default_factory=dict, description="Per-rule severity overrides, e.g. {INF006: warning}.")
    waivers: list[Waiver] = Field(default_factory=list, description="Accepted findings.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, use_enum_values=True,
                              title="clusterplan design")
