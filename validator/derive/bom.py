"""The bill of materials, computed from the topology, the catalog and the price books.

Nothing is typed by hand: counts come from the expanded topology and the cabling plan, parts from the
catalog, prices from the price books (validator.resolve.prices; each line says where its price comes
from). Unpriced lines are counted and listed, never taken as zero; power on one basis (the maximum
where published, the typical figure where only that is published, said per line) and a part with no
power figure makes the totals unknown, never zero. Shape of the JSON: schemas/bom.schema.json.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from validator.base.tables import values
from validator.derive.bom_power import power_summary
from validator.derive.bom_totals import totals
from validator.derive.cabling import Plan
from validator.derive.rack_power import RackPower, optics_in_switch
from validator.expand.topology import Topology
from validator.resolve.prices import Quote

BOM_VERSION = 3
ITEM_FIELDS = ("category", "part", "description", "qty", "spares", "fabric", "installed_in", "unit_power_w",
               "power_basis", "unit_price", "extended_price", "extended_low", "extended_high", "included_in",
               "price_origin", "price_source", "price_date", "price_basis", "price_source_class", "price_derivation")
FACILITY = ("rack", "pdu", "cdu", "rdhx")   # their own power is facility overhead, in the PUE


@dataclass
class Item:
    category: str
    part: str
    description: str
    qty: int
    fabric: str = "none"
    installed_in: str = "site"
    unit_power_w: float | None = None
    unit_price: float | None = None
    spares: int = 0
    included_in: str | None = None     # e.g. "server": part of another line's price and power
    power_basis: str | None = None     # max, typical, included, pue, design; None: unknown
    quote: Quote | None = None
    unit_low: float | None = None      # the price's range (validator/resolve/prices.py Quote.unit_range)
    unit_high: float | None = None

    @property
    def extended_price(self) -> float | None:
        if self.included_in or self.unit_price is None:
            return None
        return round(self.unit_price * self.qty, 2)

    @property
    def extended_low(self) -> float | None:
        return None if self.extended_price is None or self.unit_low is None else round(self.unit_low * self.qty, 2)

    @property
    def extended_high(self) -> float | None:
        return None if self.extended_price is None or self.unit_high is None else round(self.unit_high * self.qty, 2)

    @property
    def unknown_power(self) -> bool:
        return self.power_basis is None

    @property
    def counted_w(self) -> float:
        """Power this line adds to the IT total (0 for included, facility and unknown lines)."""
        if self.power_basis in ("max", "typical", "design") and self.unit_power_w is not None:
            return self.unit_power_w * self.qty
        return 0.0

    def as_dict(self) -> dict[str, Any]:
        q = self.quote
        out = {k: getattr(self, k) for k in ITEM_FIELDS[:14]}
        out.update({"price_origin": q.origin if q else None, "price_source": q.source if q else None,
                    "price_date": q.date if q else None, "price_basis": q.basis if q else None,
                    "price_source_class": q.source_class if q else None,
                    "price_derivation": q.derivation if q else None})
        return out


@dataclass
class Bom:
    name: str
    file: str
    items: list[Item]
    power: dict[str, Any]
    totals: dict[str, Any] = field(default_factory=dict)
    tco: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"version": BOM_VERSION, "name": self.name, "file": self.file,
                "items": [i.as_dict() for i in self.items], "totals": self.totals, "power": self.power,
                "tco": self.tco}


def _defaults() -> dict[str, Any]:
    return values("defaults.yaml", "bom")


class _Pricer:
    """Prices a part from the run's price layers (design, --prices, repository books, catalog, built-in)."""

    def __init__(self, topology: Topology) -> None:
        r = topology.resolved
        self.table = r.costing.prices
        self.catalog = r.catalog
        self.design = r.design.costs.prices_usd

    def __call__(self, item: Item, catalog_price: float | None = None, length_m: float | None = None,
                 own: float | None = None, own_key: str = "storage.nodes.price_usd") -> Item:
        """Price a line; `own` is a price the design states for the line itself (storage nodes)."""
        origin = self.catalog.origin.get((_kind(item.category), item.part), "catalog")
        quote = self.table.quote(item.part, item.category, catalog_price, f"catalog {origin}", self.design)
        if own is not None:
            quote = Quote(item.part, own, 0.0, 0.0, f"design {own_key}", None, "design", f"design {own_key}",
                          source_class="buyer")
        if quote is not None:
            item.quote, item.unit_price = quote, quote.unit_usd(length_m)
            item.unit_low, item.unit_high = quote.unit_range(length_m)
        return item


def _kind(category: str) -> str:
    return {"dpu": "nic", "storage": "storage", "rack": "facility", "pdu": "facility", "cdu": "facility",
            "rdhx": "facility", "power-shelf": "facility", "nvlink-switch-tray": "facility"}.get(category, category)


def build_bom(topology: Topology, plan: Plan | None = None, racks: RackPower | None = None) -> Bom:
    r = topology.resolved
    d = r.design
    plan = plan or Plan(topology)
    racks = racks or RackPower(topology, plan)
    price = _Pricer(topology)
    defaults = _defaults()
    items = _server_items(topology, price)
    items += _switch_items(topology, price)
    items += _link_items(plan, price)
    if topology.storage_nodes and d.storage and d.storage.nodes:
        n = d.storage.nodes
        node = Item("storage", "storage-node", f"{d.storage.type} storage node", n.count, "storage", "rack",
                    n.power_w, power_basis="design" if n.power_w is not None else None)
        items.append(price(node, own=n.price_usd))
    items += _appliance_items(topology, price)
    power = power_summary(topology, plan, items, racks)
    items += _facility_items(topology, plan, racks, power, price, defaults)
    _apply_spares(items, d.costs.spares_pct, defaults)
    items.sort(key=lambda i: (_CATEGORY_ORDER.get(i.category, 99), i.fabric, i.installed_in, i.part))
    bom = Bom(d.metadata.name, r.file, items, power)
    bom.totals = totals(items, power)
    from validator.derive.cost import design_tco

    bom.tco = design_tco(topology, bom)
    return bom


CATEGORIES = ("server", "gpu", "nic", "dpu", "nvlink-switch-tray", "power-shelf", "switch", "transceiver", "cable",
              "storage", "appliance", "rack", "pdu", "cdu", "rdhx")


def _appliance_items(topology: Topology, price: _Pricer) -> list[Item]:
    """The devices a fabric's `extra_endpoints` name (UFM, management servers), as `racks` places them: one
    line per name (the first fabric naming it), power and price from the design, else unknown."""
    items: list[Item] = []
    seen: set[str] = set()
    for name, fab in topology.resolved.fabrics.items():
        for e in fab.spec.extra_endpoints:
            if e.name in seen:
                continue
            seen.add(e.name)
            item = Item("appliance", e.name, f"{e.name} appliance ({e.ports} port(s) on the {name} fabric)", e.count,
                        name, "rack", e.power_w, power_basis="design" if e.power_w is not None else None)
            items.append(price(item, own=e.price_usd, own_key=f"fabrics.{name}.extra_endpoints {e.name} price_usd"))
    return items
_CATEGORY_ORDER = {c: i for i, c in enumerate(CATEGORIES)}


def _server_items(topology: Topology, price: _Pricer) -> list[Item]:
    r = topology.resolved
    cat = r.catalog
    server = r.server
    basis = (server.power_basis or "max") if server.max_power_w is not None else None
    items = [price(Item("server", server.id, server.name, topology.servers, "none", "rack", server.max_power_w,
                        power_basis=basis), server.price_usd)]
    items.append(price(Item("gpu", r.gpu.id, r.gpu.name, topology.gpus, "none", "server", r.gpu.tdp_w,
                            included_in="server", power_basis="included"), r.gpu.price_usd))
    for slot in server.nics:
        nic = cat.nic(slot.model)
        if nic.category == "bmc":
            continue
        items.append(price(Item(nic.category, nic.id, nic.name, slot.count * topology.servers, "none", "server",
                                nic.power_w, included_in="server", power_basis="included"), nic.price_usd))
    system = server.rack_system
    for part in system.parts if system else []:
        entry = cat.find("facility", part.model)
        if entry is None:
            continue
        items.append(price(Item(entry.category, entry.id, f"{entry.name} ({part.count} per rack)",
                                part.count * topology.gpu_racks, "none", "rack", entry.power_w,
                                included_in="server", power_basis="included"), entry.price_usd))
    return items


def _switch_items(topology: Topology, price: _Pricer) -> list[Item]:
    items = []
    for name, fab in topology.fabrics.items():
        for tier in fab.tiers:
            sw = tier.switch
            watts, basis = (sw.power_max_w, "max") if sw.power_max_w else (sw.power_typical_w, "typical")
            items.append(price(Item("switch", sw.id, sw.name, fab.count(tier.role), name, tier.role, watts,
                                    power_basis=basis if watts else None), sw.price_usd))
    return items


def _xcvr_item(topology: Topology, fabric: str, part: str, role: str, qty: int, price: _Pricer) -> Item:
    x = topology.resolved.catalog.transceiver(part)
    if optics_in_switch(topology, fabric, role):
        basis: str | None = "included"
        desc = f"{x.name} (power in the switch's maximum)"
    else:
        basis = (x.power_basis or "max") if x.power_w is not None else None
        desc = x.name
    return price(Item("transceiver", part, desc, qty, fabric, role, x.power_w, power_basis=basis), x.price_usd)


def _link_items(plan: Plan, price: _Pricer) -> list[Item]:
    tally = plan.tally
    topology = plan.topology
    catalog = topology.resolved.catalog
    items = []
    for (fabric, part, length), qty in sorted(tally.cables_bought.items()):   # whole cables (derive/tally.py)
        cable = catalog.find("cable", part)
        desc = f"{cable.name}, {length:g} m" if cable else f"no catalog media reaches {length:g} m at this speed"
        watts = cable.power_w if cable else None
        item = Item("cable", part, desc, qty, fabric, f"{length:g} m", watts,
                    power_basis="max" if watts is not None else None)
        items.append(price(item, cable.price_usd if cable else None, length))
    node: dict[tuple[str, str, str], int] = {}
    for (fabric, part, role, _rack), modules in tally.node_xcvr.items():    # one module per occupied cage
        node[(fabric, part, role)] = node.get((fabric, part, role), 0) + modules
    for (fabric, part, role), qty in sorted(node.items()):
        items.append(_xcvr_item(topology, fabric, part, role, qty, price))
    for (fabric, part, role), devices in sorted(tally.switch_xcvr.items()):
        items.append(_xcvr_item(topology, fabric, part, role, sum(devices.values()), price))
    return items


def racks_per_cdu(topology: Topology, gpu_rack_kw: float | None) -> int:
    """GPU racks one CDU serves: the design's figure, else as many of the heaviest GPU rack as its capacity holds."""
    site = topology.resolved.design.site.rack
    cdu = topology.resolved.catalog.facility(site.cdu) if site.cdu else None
    if site.racks_per_cdu:
        return site.racks_per_cdu
    if cdu is not None and cdu.rack_units:
        return 1            # an in-rack CDU stands in the rack it serves (validator.expand.racks)
    if cdu is not None and cdu.capacity_kw and gpu_rack_kw:
        return max(1, math.floor(cdu.capacity_kw / gpu_rack_kw))
    return 1


def pdus_per_feed(kw: float | None, capacity_kw: float) -> int:
    """PDUs on each power feed of a rack drawing `kw` (one when its power is unknown)."""
    return 1 if kw is None else max(1, math.ceil(kw / capacity_kw))


def _facility_items(topology: Topology, plan: Plan, racks: RackPower, power: dict[str, Any], price: _Pricer,
                    defaults: dict[str, Any]) -> list[Item]:
    r = topology.resolved
    cat = r.catalog
    rack = r.rack
    site = r.design.site.rack
    system = r.server.rack_system
    bought = plan.layout.rack_count
    items = []
    if system is not None and system.includes_rack:
        # NVL72-style racks come whole: their cabinets are in the compute trays' price
        bought -= topology.gpu_racks
        items.append(price(Item("rack", rack.id, f"{rack.name} (GPU racks: in the {r.server.id} price)",
                                topology.gpu_racks, "none", "site", None, included_in="server", power_basis="pue"),
                           rack.price_usd))
    if bought:
        items.append(price(Item("rack", rack.id, rack.name, bought, "none", "site", None, power_basis="pue"),
                           rack.price_usd))
    pdu = cat.facility(site.pdu or str(defaults["pdu"]))
    feeds = int(defaults["pdu_feeds"])
    if pdu.capacity_kw:
        cap = pdu.capacity_kw
        # each rack sized to its own power; a rack of unknown power to the part of it that is known
        qty = sum(pdus_per_feed(load.known_w / 1000, cap) for load in racks.loads) * feeds
        unknown = any(load.unknown for load in racks.loads)
        desc = f"{pdu.name} ({feeds} feeds per rack, sized per rack" + (
            "; racks of unknown power sized to their known part)" if unknown else ")")
        items.append(price(Item("pdu", pdu.id, desc, qty, "none", "rack", None, power_basis="pue"), pdu.price_usd))
    if site.cooling == "liquid" and site.cdu:
        cdu = cat.facility(site.cdu)
        per = racks_per_cdu(topology, power["gpu_rack_kw"])
        items.append(price(Item("cdu", cdu.id, f"{cdu.name} ({per} GPU rack(s) each)",
                                math.ceil(power["gpu_racks"] / per), "none", "site", None, power_basis="pue"),
                           cdu.price_usd))
    if site.cooling == "rear-door" and site.rear_door:
        door = cat.facility(site.rear_door)
        items.append(price(Item("rdhx", door.id, door.name, power["gpu_racks"], "none", "rack", None,
                                power_basis="pue"), door.price_usd))
    return items


def _apply_spares(items: list[Item], pct: dict[str, float], defaults: dict[str, Any]) -> None:
    for item in items:
        share = pct.get(item.category, defaults.get(f"spares_pct_{item.category}", 0))
        if share and not item.included_in:
            item.spares = math.ceil(item.qty * float(share) / 100)
            item.qty += item.spares
