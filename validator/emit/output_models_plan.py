"""Typed models of the failure-domain report (`failures --format json`) and the bill of materials (`bom
--format json`); their schemas under schemas/ are generated from them (validator/emit/schemas.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from validator.emit.output_models import Count, NonNeg, Share, _Open, _Out


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


KwOrNull = Annotated[float | None, Field(description="kW; null when a part in it has unknown power")]


class BomItem(_Out):
    category: Literal["server", "gpu", "nic", "dpu", "nvlink-switch-tray", "power-shelf", "switch", "transceiver",
                      "cable", "storage", "appliance", "rack", "pdu", "cdu", "rdhx", "growth"]
    part: str = Field(description="Catalog id (UNRESOLVED-... when no catalog part fits)")
    description: str
    qty: NonNeg
    spares: NonNeg
    fabric: Literal["compute", "storage", "inband", "oob", "none"]
    installed_in: str = Field(description="Device role it goes into (server, leaf, spine, core, rack, site) or, "
                              "for cables, the length class")
    unit_power_w: float | None = Field(description="W per unit on the line's power_basis; null when unknown")
    power_basis: Literal["max", "typical", "included", "pue", "design"] | None = Field(
        description="max / typical: the figure's basis; included: in another line's power (a server, or a switch "
        "whose maximum is with active modules); pue: facility overhead, in the PUE; design: the design's own "
        "figure; null: unknown")
    unit_price: float | None = Field(description="USD per unit after the price book's discount (cables: including "
                                     "the per-metre part at the length class); null when unpriced")
    extended_price: float | None = Field(description="qty x unit_price; null when unpriced or included in another "
                                         "line")
    included_in: str | None = Field(description="Line whose price and power already include this part")
    price_origin: str | None = Field(description="The price book (or catalog file, or the design) the price comes "
                                     "from")
    price_source: str | None = Field(description="Where that figure comes from")
    price_date: str | None = Field(description="When the figure was published (YYYY, YYYY-MM or YYYY-MM-DD)")
    extended_low: float | None = Field(description="Low end of the extended price (the source's own range, else "
                                       "the basis's spread: validator/data/price_ranges.yaml); null when unpriced "
                                       "or included")
    extended_high: float | None = Field(description="High end of the extended price; null when unpriced or included")
    price_basis: Literal["quote", "list", "street", "volume", "derived", "proxy", "design"] | None = Field(
        description="What kind of price: quote, list (the ceiling), street, volume (the floor), derived (arithmetic "
        "in price_derivation), proxy (another product's price, named in price_derivation), design (the design's "
        "own figure); null: unpriced")
    price_source_class: Literal["vendor", "reseller", "analyst", "press", "cost-model", "buyer"] | None = Field(
        description="Who publishes the figure (cost-model: someone's public cost model, the weakest)")
    price_derivation: str | None = Field(description="derived and proxy prices: the arithmetic, or the product "
                                         "standing in")


class BomTotals(_Open):
    capex_usd: float = Field(description="Sum of the priced lines only, at their expected prices (= capex_expected)")
    capex_low: float = Field(description="Sum of the priced lines' low ends")
    capex_expected: float = Field(description="Sum of the priced lines' expected prices")
    capex_high: float = Field(description="Sum of the priced lines' high ends")
    capex_complete: bool = Field(description="True when every line that is not part of another is priced")
    capex_by_category_usd: dict[str, float]
    capex_by_basis_usd: dict[str, float] = Field(description="Expected capex split by price basis")
    weak_price_parts: list[str] = Field(description="Parts priced on a derived or proxy figure")
    priced_lines: int
    unpriced_lines: int
    unpriced_parts: list[str]
    lines: int
    qty_by_category: dict[str, int]
    it_kw: float | None = Field(description="null when a part's power is unknown")
    facility_kw: float | None


class BomPower(_Open):
    basis: str
    typical_parts: list[str] = Field(description="Parts counted at a typical figure (no maximum published): the "
                                     "total understates the maximum")
    gpu_racks: int
    network_racks: int
    gpu_rack_kw: float | None = Field(description="kW of the heaviest GPU rack (its devices, the optics in them and "
                                      "its share of active cables, as `clusterplan racks` counts it); null when a "
                                      "part in it has unknown power")
    network_rack_kw: float | None = Field(description="kW of the heaviest network rack, counted the same way; null "
                                          "when a part in it has unknown power")
    servers_kw: KwOrNull
    switches_kw: KwOrNull
    optics_kw: KwOrNull
    cables_kw: KwOrNull
    storage_kw: KwOrNull
    appliances_kw: float | None = Field(description="kW of the fabrics' extra endpoints (UFM, management servers); "
                                        "null when one has no power figure")
    it_kw: KwOrNull
    it_kw_known: float = Field(description="kW of the lines whose power is known: a lower bound when it_kw is null")
    pue: float
    facility_kw: KwOrNull
    heat_kw_by_cooling: dict[str, Any]
    hours_per_year: float
    electricity_usd_per_kwh: float
    unknown_power_parts: list[str]


class TcoAssumption(_Open):
    value: float
    from_: str = Field(alias="from")
    source: str


class Tco(_Open):
    """Total cost of ownership per year and the cost of a busy GPU-hour (validator/derive/cost.py); null figures
    where capex is partial or power unknown"""

    inputs: dict[str, Any]
    energy_mwh_per_year: float | None
    energy_usd_per_year: float | None
    depreciation_usd_per_year: float | None
    support_usd_per_year: float | None
    total_usd_per_year: float | None
    gpu_hour_usd: float | None
    expected_kw: float | None = Field(description="IT maximum x expected draw fraction x utilization: the draw energy "
                                      "is charged at")
    cost_of_capital_usd_per_year: float | None = Field(description="The annuity's financing part: capital charge less "
                                                       "depreciation")
    colocation_usd_per_year: float | None = Field(description="IT maximum x colocation $/kW-month x 12")
    staff_usd_per_year: float | None = Field(description="Operations staff (0 unless set)")
    gpu_hour_usd_low: float | None = Field(description="Cost of a busy GPU-hour at capex_low")
    gpu_hour_usd_high: float | None = Field(description="Cost of a busy GPU-hour at capex_high")
    assumptions: dict[str, TcoAssumption] = Field(description="Each TCO assumption: its value, where it comes from "
                                                  "(design, .clusterplan.yaml tco, default) and the source")


class Bom(_Out):
    """Bill of materials of a design. Version 2. Quantities include spares; `spares` says how many. Prices come
    from price books (schemas/pricebook.schema.json); power is on one basis (the maximum where published, else
    typical, said per line); unknown power and unpriced lines are null, never zero."""

    model_config = ConfigDict(title="clusterplan bom --format json")

    version: Literal[3]
    name: str
    file: str
    items: list[BomItem]
    totals: BomTotals
    power: BomPower
    tco: Tco
