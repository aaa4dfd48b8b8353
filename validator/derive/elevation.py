"""Rack elevations (the derive stage): every rack with where it stands and, rack unit by rack unit from
the top, what stands there; its power against the budget, its weight and its cooling.

A view of facts computed elsewhere, nothing computed again: devices and rack units from the rack plan
(`validator.expand.racks`), hall/row/position and rack names from the layout (the names of the cabling
plan), device names from `validator.derive.links`, power from `validator.derive.rack_power` (the BOM's
and FAC001's figure), CDUs from the BOM's racks-per-CDU. The rack-system block of a GPU rack (NVL72:
NVLink switch trays and built-in management switches) is itemized from the server's catalog entry, in
the catalog's order (not the vendor's elevation); parts without rack units there (power shelves) are
listed as inside the rack. The rack plan keeps `reserved_ru` of a network rack free for patch panels
and cable managers but does not place them, so they are not shown. The JSON shape is generated from
these classes (schemas/racks.schema.json).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import ConfigDict, Field

from validator.base.facts import fact
from validator.derive.links import device_namer
from validator.expand.racks import Rack, Unit

if TYPE_CHECKING:
    from validator.derive import Derived

RACKS_VERSION: Literal[1] = 1
_STRICT = ConfigDict(extra="forbid")
SlotKind = Literal["server", "switch", "storage", "appliance", "rack-system", "cdu", "empty"]
CoolingKind = Literal["air", "rear-door", "liquid"]


@fact
class Slot:
    """What occupies a range of rack units (or, with height 0, sits inside another entry's units)."""

    __pydantic_config__ = _STRICT
    ru_top: Annotated[int, Field(description="Highest rack unit occupied (1 = bottom; 0 inside the rack "
                                 "without a rack unit of its own)")]
    ru_bottom: Annotated[int, Field(description="Lowest rack unit occupied (0: see ru_top)")]
    height: Annotated[int, Field(description="Rack units; 0 for a device inside another entry's units")]
    kind: SlotKind
    device: Annotated[str | None, Field(description="Device name as in the cabling plan")]
    role: Annotated[str | None, Field(description="server, leaf, spine, core, storage, an appliance's name, "
                                      "or a rack-system part's category")]
    fabric: Annotated[str | None, Field(description="Fabric of a switch or appliance")]
    model: Annotated[str | None, Field(description="Catalog id (storage nodes: the BOM's storage-node line; "
                                       "appliances: null)")]
    power_w: Annotated[float | None, Field(description="Device power, BOM basis; null: unknown or included "
                                           "in another entry (rack-system parts: in the servers')")]
    weight_kg: Annotated[float | None, Field(description="null: not in the catalog")]
    beyond_rack: Annotated[bool, Field(description="Stands above the rack's height (rule FAC003)")]


@fact
class RackPowerView:
    __pydantic_config__ = _STRICT
    total_kw: Annotated[float | None, Field(description="Devices + their optics + cable ends; null when a "
                                            "part in the rack has unknown power")]
    known_kw: Annotated[float, Field(description="What the parts of known power add up to (a lower bound)")]
    devices_kw: float
    optics_kw: float
    cables_kw: Annotated[float, Field(description="The rack's share of active cables")]
    budget_kw: float
    over_budget: Annotated[bool, Field(description="The known part alone exceeds the budget (rule FAC001)")]
    unknown: Annotated[list[str], Field(description="Parts or appliances whose power is unknown")]


@fact
class CoolingView:
    __pydantic_config__ = _STRICT
    type: CoolingKind
    rear_door: Annotated[str | None, Field(description="Rear-door heat exchanger, catalog id")]
    cdu: Annotated[str | None, Field(description="CDU serving the rack, catalog id")]
    cdu_number: Annotated[int | None, Field(description="Which CDU (1-based), racks_per_cdu GPU racks each")]
    cdu_rack_units: Annotated[int | None, Field(description="Rack units of an in-rack CDU: the rack plan does "
                                                "not place it, so they are not in the slots")]


@fact
class RackView:
    __pydantic_config__ = _STRICT
    name: Annotated[str, Field(description="Rack name as in the cabling plan")]
    index: Annotated[int, Field(description="Floor order, 0-based")]
    kind: Literal["gpu", "network"]
    group: Annotated[int | None, Field(description="Compute group (scalable unit) of a GPU or row network "
                                       "rack, 1-based; null for central network racks")]
    site: str
    hall: int
    row: int
    position: int
    model: Annotated[str, Field(description="Rack catalog id")]
    rack_units: int
    ru_used: int
    reserved_ru: Annotated[int, Field(description="Rack units the plan keeps free for patch panels and "
                                      "cable managers (not placed)")]
    slots: Annotated[list[Slot], Field(description="Top down; empty ranges included")]
    inside: Annotated[list[Slot], Field(description="In the rack without rack units of their own")]
    power: RackPowerView
    weight_kg: Annotated[float | None, Field(description="Devices only (not the empty rack); null when one "
                                             "device's weight is unknown")]
    weight_known_kg: float
    cooling: CoolingView


@fact
class Elevations:
    """`clusterplan racks --format json`: every rack of a design, top down."""

    __pydantic_config__ = _STRICT
    version: Literal[1]
    name: str
    file: str
    power_basis: str
    racks: list[RackView]
    racks_total: int
    ru_used_total: int
    power_total_kw: Annotated[float | None, Field(description="Sum over racks; null when a rack's is unknown")]
    power_known_kw: float


def racks_schema() -> dict[str, Any]:
    from pydantic import TypeAdapter

    schema = TypeAdapter(Elevations).json_schema(mode="serialization", ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://clusterplan.dev/schemas/racks.schema.json", **schema}


class _Viewer:
    def __init__(self, derived: Derived) -> None:
        self.d = derived
        self.t = derived.topology
        self.r = self.t.resolved
        self.namers: dict[tuple[str, str], Callable[[int], str]] = {}
        self.models: dict[tuple[str, str, str], tuple[str | None, float | None]] = {}
        site = self.r.design.site
        self.site = site.name or self.r.design.metadata.name
        self.budget = site.rack.power_budget_kw
        self.reserve = int(self.r.layout["network_rack_reserved_ru"])
        from validator.derive.bom import racks_per_cdu

        self.per_cdu = racks_per_cdu(self.t, derived.bom.power["gpu_rack_kw"])
        self.gpu_ordinal = {rack: g for g, rack in enumerate(self.t.racks.gpu_rack_at)}

    def name(self, unit: Unit) -> str:
        if unit.kind == "cdu":
            return f"cdu{unit.index + 1:05d}"
        fabric = unit.fabric if unit.kind in ("switch", "appliance") else ""
        role = "storage" if unit.kind == "storage" else unit.role
        key = (fabric, role)
        namer = self.namers.get(key)
        if namer is None:
            namer = self.namers[key] = device_namer(self.t, fabric, role)
        return namer(unit.index)

    def model(self, unit: Unit) -> tuple[str | None, float | None]:
        """(catalog id, weight) of a unit."""
        key = (unit.kind, unit.fabric, unit.role)
        found = self.models.get(key)
        if found is None:
            found = self.models[key] = self._model(unit)
        return found

    def _model(self, unit: Unit) -> tuple[str | None, float | None]:
        if unit.kind == "server":
            return self.r.server.id, self.r.server.weight_kg
        if unit.kind == "switch":
            tier = self.t.fabrics[unit.fabric].tier(unit.role)
            return (tier.switch.id, tier.switch.weight_kg) if tier else (None, None)
        if unit.kind == "storage":
            return "storage-node", None        # the BOM's line; the design gives no weight
        if unit.kind == "cdu":
            cdu = self.r.design.site.rack.cdu
            return cdu, None
        return None, None

    def slot(self, unit: Unit, ru: int | None = None, height: int | None = None) -> Slot:
        model, weight = self.model(unit)
        bottom = unit.ru if ru is None else ru
        h = unit.height if height is None else height
        top = bottom + h - 1 if h else bottom
        return Slot(top, bottom, h, cast(SlotKind, unit.kind), self.name(unit), unit.role,
                    unit.fabric or None, model, unit.power_w, weight, top > self.t.racks.rack_units)

    def system(self, unit: Unit, builtin: list[Unit]) -> tuple[list[Slot], list[Slot]]:
        """A rack-system block itemized: parts with rack units (catalog order), the built-in management
        switches, any rest as one block; parts without rack units go inside."""
        system = self.r.server.rack_system
        placed: list[Slot] = []
        inside: list[Slot] = []
        ru, top = unit.ru, unit.ru + unit.height
        for part in system.parts if system else []:
            entry = self.r.catalog.find("facility", part.model)
            for k in range(part.count):
                if entry is not None and entry.rack_units and ru + entry.rack_units <= top:
                    placed.append(self._part(ru, entry.rack_units, entry.category, part.model, k))
                    ru += entry.rack_units
                else:
                    inside.append(self._part(0, 0, entry.category if entry else "part", part.model, k))
        for sw in builtin:
            if ru < top:
                placed.append(self.slot(sw, ru, 1))
                ru += 1
            else:
                inside.append(self.slot(sw, 0, 0))
        if ru < top:
            placed.append(Slot(top - 1, ru, top - ru, "rack-system", None, "rack-system", None, self.r.server.id,
                               None, None, top - 1 > self.t.racks.rack_units))
        return placed, inside

    def _part(self, ru: int, height: int, category: str, model: str, k: int) -> Slot:
        top = ru + height - 1 if height else ru
        return Slot(top, ru, height, "rack-system", f"{model}-{k + 1}", category, None, model, None, None,
                    top > self.t.racks.rack_units)

    def view(self, rack: Rack) -> RackView:
        t, layout = self.t, self.d.layout
        spot = layout.spot(rack.index)
        builtin = [u for u in rack.units if u.height == 0 and u.kind == "switch"]
        placed: list[Slot] = []
        inside: list[Slot] = []
        for unit in rack.units:
            if unit.kind == "rack-system":
                more, within = self.system(unit, builtin)
                placed += more
                inside += within
            elif unit.height:
                placed.append(self.slot(unit))
        if not any(u.kind == "rack-system" for u in rack.units):
            inside += [self.slot(u, 0, 0) for u in builtin]
        slots = _with_empty(sorted(placed, key=lambda s: -s.ru_bottom), t.racks.rack_units)
        weights = [s.weight_kg for s in placed + inside]
        return RackView(layout.rack_name(rack.index), rack.index, cast(Literal["gpu", "network"], rack.kind),
                        None if rack.group is None else rack.group + 1, self.site, spot.hall + 1, spot.row + 1,
                        spot.position + 1, self.r.rack.id, t.racks.rack_units, rack.ru_used,
                        self.reserve if rack.kind == "network" else 0, slots, inside, self.power(rack),
                        None if None in weights else round(sum(w for w in weights if w), 2),
                        round(sum(w for w in weights if w), 2), self.cooling(rack))

    def power(self, rack: Rack) -> RackPowerView:
        load = self.d.rack_power[rack.index]
        return RackPowerView(load.total_kw, round(load.known_w / 1000, 3), round(load.devices_w / 1000, 3),
                             round(load.optics_w / 1000, 3), round(load.cables_w / 1000, 3), self.budget,
                             load.known_w / 1000 > self.budget + 1e-9, sorted(load.unknown))

    def cooling(self, rack: Rack) -> CoolingView:
        site = self.r.design.site.rack
        if rack.kind != "gpu":
            return CoolingView(cast(CoolingKind, rack.cooling(self.t.fabrics, "air")), None, None, None, None)
        door = site.rear_door if site.cooling == "rear-door" else None
        cdu = site.cdu if site.cooling == "liquid" else None
        number = self.gpu_ordinal[rack.index] // self.per_cdu + 1 if cdu else None
        units = self.r.catalog.facility(cdu).rack_units if cdu else None
        return CoolingView(cast(CoolingKind, str(site.cooling)), door, cdu, number, units)


def _with_empty(slots: list[Slot], rack_units: int) -> list[Slot]:
    """The occupied slots (top down) with the free ranges between them."""
    out: list[Slot] = []
    cursor = rack_units               # the highest rack unit not yet accounted for
    for s in slots:
        if s.ru_top < cursor:
            out.append(_empty(cursor, s.ru_top + 1))
        out.append(s)
        cursor = min(cursor, s.ru_bottom - 1)
    if cursor >= 1:
        out.append(_empty(cursor, 1))
    return out


def _empty(top: int, bottom: int) -> Slot:
    return Slot(top, bottom, top - bottom + 1, "empty", None, None, None, None, None, None, False)


def elevations(derived: Derived) -> Elevations:
    viewer = _Viewer(derived)
    racks = [viewer.view(rack) for rack in derived.topology.racks.racks]
    loads = derived.rack_power
    return Elevations(RACKS_VERSION, derived.topology.resolved.design.metadata.name, derived.topology.resolved.file,
                      derived.bom.power["basis"], racks, len(racks), sum(r.ru_used for r in racks),
                      loads.total_kw(), round(sum(r.known_w for r in loads.loads) / 1000, 3))
