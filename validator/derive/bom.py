"""Stage 8: the bill of materials, power and cooling, computed from the topology and the catalog.

Nothing is typed by hand: counts come from the expanded topology and the cabling plan, parts and
prices from the catalog (or the design's price overrides). Unpriced lines are counted and shown.
Shape of the JSON: schemas/bom.schema.json.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from validator.base.resources import load_data
from validator.derive.cabling import Plan
from validator.expand.topology import Topology

BOM_VERSION = 1
ITEM_FIELDS = ("category", "part", "description", "qty", "spares", "fabric", "installed_in", "unit_power_w",
               "unit_price", "extended_price", "included_in")


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

    @property
    def extended_price(self) -> float | None:
        if self.included_in or self.unit_price is None:
            return None
        return self.unit_price * self.qty

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ITEM_FIELDS}


@dataclass
class Bom:
    name: str
    file: str
    items: list[Item]
    power: dict[str, Any]
    totals: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"version": BOM_VERSION, "name": self.name, "file": self.file,
                "items": [i.as_dict() for i in self.items], "totals": self.totals, "power": self.power}


def _defaults() -> dict[str, Any]:
    return {k: v["value"] for k, v in load_data("defaults.yaml")["bom"].items()}


def build_bom(topology: Topology, plan: Plan | None = None) -> Bom:
    r = topology.resolved
    d = r.design
    cat = r.catalog
    plan = plan or Plan(topology)
    prices = d.costs.prices_usd
    defaults = _defaults()
    items: list[Item] = []

    def price(part: str, catalog_price: float | None) -> float | None:
        return prices.get(part, catalog_price)

    server = r.server
    items.append(Item("server", server.id, server.name, topology.servers, "none", "rack", server.max_power_w,
                      price(server.id, server.price_usd)))
    items.append(Item("gpu", r.gpu.id, r.gpu.name, topology.gpus, "none", "server", r.gpu.tdp_w,
                      price(r.gpu.id, r.gpu.price_usd), included_in="server"))
    for slot in server.nics:
        nic = cat.nic(slot.model)
        if nic.category == "bmc":
            continue
        items.append(Item(nic.category, nic.id, nic.name, slot.count * topology.servers, "none", "server",
                          nic.power_w, price(nic.id, nic.price_usd), included_in="server"))
    for name, fab in topology.fabrics.items():
        for tier in fab.tiers:
            sw = tier.switch
            watts = sw.power_max_w or sw.power_typical_w
            items.append(Item("switch", sw.id, sw.name, fab.count(tier.role), name, tier.role, watts,
                              price(sw.id, sw.price_usd)))
    items += _link_items(plan, prices)
    if topology.storage_nodes and d.storage and d.storage.nodes:
        n = d.storage.nodes
        items.append(Item("storage", "storage-node", f"{d.storage.type} storage node", n.count, "storage", "rack",
                          n.power_w, n.price_usd))
    power = _power(topology, plan, items)
    items += _facility_items(topology, plan, power, prices, defaults)
    _apply_spares(items, d.costs.spares_pct, defaults)
    items.sort(key=lambda i: (_CATEGORY_ORDER.get(i.category, 99), i.fabric, i.installed_in, i.part))
    bom = Bom(d.metadata.name, r.file, items, power)
    bom.totals = _totals(items, power)
    return bom


_CATEGORY_ORDER = {c: i for i, c in enumerate(("server", "gpu", "nic", "dpu", "switch", "transceiver", "cable",
                                                "storage", "rack", "pdu", "cdu", "rdhx"))}


def _link_items(plan: Plan, prices: dict[str, float]) -> list[Item]:
    tally = plan.tally
    cables, node_xcvr, switch_xcvr = tally.cables, tally.node_xcvr, tally.switch_xcvr
    catalog = plan.topology.resolved.catalog
    items = []
    for (fabric, part, length), links in sorted(cables.items()):
        cable = catalog.find("cable", part)
        per = cable.links_per_cable if cable else 1
        desc = f"{cable.name}, {length:g} m" if cable else f"no catalog media reaches {length:g} m at this speed"
        items.append(Item("cable", part, desc, math.ceil(links / per), fabric, f"{length:g} m",
                          None, prices.get(part, cable.price_usd if cable else None)))
    for (fabric, part, role), links in sorted(node_xcvr.items()):
        x = catalog.transceiver(part)
        items.append(Item("transceiver", part, x.name, math.ceil(links / x.ports), fabric, role, x.power_w,
                          prices.get(part, x.price_usd)))
    for (fabric, part, role), devices in sorted(switch_xcvr.items()):
        x = catalog.transceiver(part)
        qty = sum(math.ceil(n / x.ports) for n in devices.values())
        items.append(Item("transceiver", part, x.name, qty, fabric, role, x.power_w, prices.get(part, x.price_usd)))
    return items


def _power(topology: Topology, plan: Plan, items: list[Item]) -> dict[str, Any]:
    r = topology.resolved
    server_w = r.server.max_power_w
    switch_w = sum((i.unit_power_w or 0) * i.qty for i in items if i.category == "switch")
    unknown = sorted({i.part for i in items if i.category in ("server", "switch", "transceiver")
                      and i.unit_power_w is None})
    optics_node = sum((i.unit_power_w or 0) * i.qty for i in items if i.category == "transceiver"
                      and i.installed_in not in ("leaf", "spine", "core"))
    optics_switch = sum((i.unit_power_w or 0) * i.qty for i in items if i.category == "transceiver"
                        and i.installed_in in ("leaf", "spine", "core"))
    storage_w = sum((i.unit_power_w or 0) * i.qty for i in items if i.category == "storage")
    gpu_racks = topology.gpu_racks
    network_racks = plan.layout.rack_count - gpu_racks
    servers_kw = (server_w or 0) * topology.servers / 1000
    gpu_rack_kw = (server_w or 0) * r.design.compute.servers_per_rack / 1000
    network_kw = (switch_w + optics_switch + storage_w) / 1000
    it_kw = servers_kw + network_kw + optics_node / 1000
    pue = r.pue
    facility_kw = it_kw * pue
    hours = float(load_data("serving.yaml")["hours_per_year"]["value"])
    cooling = r.design.site.rack.cooling
    heat = {"air": network_kw, "rear-door": 0.0, "liquid": 0.0}
    heat[cooling] = heat.get(cooling, 0.0) + servers_kw + optics_node / 1000
    return {
        "gpu_racks": gpu_racks, "network_racks": network_racks, "gpu_rack_kw": gpu_rack_kw,
        "network_rack_kw": network_kw / network_racks if network_racks else 0.0,
        "servers_kw": servers_kw, "switches_kw": switch_w / 1000, "optics_kw": (optics_node + optics_switch) / 1000,
        "storage_kw": storage_w / 1000, "it_kw": it_kw, "pue": pue, "facility_kw": facility_kw,
        "heat_kw_by_cooling": heat, "energy_mwh_per_year": facility_kw * hours / 1000,
        "energy_cost_per_year_usd": facility_kw * hours * r.electricity_usd_per_kwh,
        "electricity_usd_per_kwh": r.electricity_usd_per_kwh, "hours_per_year": hours,
        "unknown_power_parts": unknown,
    }


def _facility_items(topology: Topology, plan: Plan, power: dict[str, Any], prices: dict[str, float],
                    defaults: dict[str, Any]) -> list[Item]:
    r = topology.resolved
    cat = r.catalog
    rack = r.rack
    site = r.design.site.rack
    total_racks = plan.layout.rack_count
    items = [Item("rack", rack.id, rack.name, total_racks, "none", "site", None, prices.get(rack.id, rack.price_usd))]
    pdu = cat.facility(site.pdu or str(defaults["pdu"]))
    feeds = int(defaults["pdu_feeds"])
    if pdu.capacity_kw:
        per_gpu_rack = max(1, math.ceil(power["gpu_rack_kw"] / pdu.capacity_kw)) * feeds
        per_net_rack = max(1, math.ceil(power["network_rack_kw"] / pdu.capacity_kw)) * feeds
        qty = per_gpu_rack * power["gpu_racks"] + per_net_rack * power["network_racks"]
        items.append(Item("pdu", pdu.id, f"{pdu.name} ({feeds} feeds per rack)", qty, "none", "rack", None,
                          prices.get(pdu.id, pdu.price_usd)))
    if site.cooling == "liquid" and site.cdu:
        cdu = cat.facility(site.cdu)
        per = site.racks_per_cdu or (max(1, math.floor(cdu.capacity_kw / power["gpu_rack_kw"]))
                                     if cdu.capacity_kw and power["gpu_rack_kw"] else 1)
        items.append(Item("cdu", cdu.id, f"{cdu.name} ({per} GPU rack(s) each)", math.ceil(power["gpu_racks"] / per),
                          "none", "site", None, prices.get(cdu.id, cdu.price_usd)))
    if site.cooling == "rear-door" and site.rear_door:
        door = cat.facility(site.rear_door)
        items.append(Item("rdhx", door.id, door.name, power["gpu_racks"], "none", "rack", None,
                          prices.get(door.id, door.price_usd)))
    return items


def _apply_spares(items: list[Item], pct: dict[str, float], defaults: dict[str, Any]) -> None:
    for item in items:
        share = pct.get(item.category, defaults.get(f"spares_pct_{item.category}", 0))
        if share and not item.included_in:
            item.spares = math.ceil(item.qty * float(share) / 100)
            item.qty += item.spares


def _totals(items: list[Item], power: dict[str, Any]) -> dict[str, Any]:
    priced = [i for i in items if i.extended_price is not None]
    unpriced = [i for i in items if i.extended_price is None and not i.included_in]
    by_category: dict[str, float] = defaultdict(float)
    for i in priced:
        by_category[i.category] += i.extended_price or 0.0
    return {
        "capex_usd": sum(i.extended_price or 0.0 for i in priced),
        "capex_by_category_usd": dict(sorted(by_category.items())),
        "priced_lines": len(priced), "unpriced_lines": len(unpriced),
        "unpriced_parts": sorted({i.part for i in unpriced}),
        "lines": len(items),
        "qty_by_category": dict(sorted(Counter({c: sum(i.qty for i in items if i.category == c)
                                                 for c in {i.category for i in items}}).items())),
        "it_kw": power["it_kw"], "facility_kw": power["facility_kw"],
    }
