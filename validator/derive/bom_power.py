"""The BOM's power and cooling totals, on one stated basis, with unknown kept unknown.

Basis: each part's maximum where its source publishes one, else its typical figure (the line says
which, and `typical_parts` lists them: a total with such parts understates the maximum). Parts inside
another line (GPUs and NICs in a server, NVLink switch trays and power shelves in the NVL72 trays'
share, optics in a switch whose maximum is with active modules) are not added again. Racks, PDUs, CDUs
and rear doors are facility overhead, in the PUE. A line whose power is unknown makes every total it
belongs to unknown (None); `it_kw_known` is what the known lines add up to, a lower bound. The
per-rack figures (`gpu_rack_kw`, `network_rack_kw`: the heaviest rack of each kind) come from
`validator.derive.rack_power`, the same figure FAC001 and `clusterplan racks` read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from validator.base.tables import hours_per_year
from validator.derive.cabling import Plan
from validator.expand.topology import SWITCH_ROLES, Topology

if TYPE_CHECKING:
    from validator.derive.bom import Item
    from validator.derive.rack_power import RackPower

BASIS = "maximum where published, else typical (see typical_parts)"


def _group_kw(items: list[Item], pick: Any) -> float | None:
    """kW of the lines `pick` selects; None when any of them has unknown power."""
    chosen = [i for i in items if pick(i)]
    if any(i.unknown_power for i in chosen):
        return None
    return sum(i.counted_w for i in chosen) / 1000


def _switch_end(i: Item) -> bool:
    return i.category == "transceiver" and i.installed_in in SWITCH_ROLES


def _r(value: float | None) -> float | None:
    """kW to the watt: sums of many lines carry float noise that says nothing."""
    return None if value is None else round(value, 3)


def _sum(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def power_summary(topology: Topology, plan: Plan, items: list[Item], racks: RackPower) -> dict[str, Any]:
    r = topology.resolved
    servers_kw = _group_kw(items, lambda i: i.category == "server")
    switches_kw = _group_kw(items, lambda i: i.category == "switch")
    node_optics = _group_kw(items, lambda i: i.category == "transceiver" and not _switch_end(i))
    switch_optics = _group_kw(items, _switch_end)
    cables_kw = _group_kw(items, lambda i: i.category == "cable")
    storage_kw = _group_kw(items, lambda i: i.category == "storage")
    appliances_kw = _group_kw(items, lambda i: i.category == "appliance")
    optics_kw = _sum(node_optics, switch_optics)
    it_kw = _sum(servers_kw, switches_kw, optics_kw, cables_kw, storage_kw, appliances_kw)
    gpu_racks = topology.gpu_racks
    network_racks = plan.layout.rack_count - gpu_racks
    network_kw = _sum(switches_kw, switch_optics, storage_kw, appliances_kw)
    pue = r.pue
    facility_kw = None if it_kw is None else it_kw * pue
    cooling = r.design.site.rack.cooling
    in_gpu_racks = _sum(servers_kw, node_optics)
    heat: dict[str, float | None] = {"air": _sum(network_kw, cables_kw), "rear-door": 0.0, "liquid": 0.0}
    heat[cooling] = _sum(heat.get(cooling, 0.0), in_gpu_racks)
    unknown = sorted({i.part for i in items if i.unknown_power})
    heat = {k: _r(v) for k, v in heat.items()}
    return {
        "basis": BASIS, "typical_parts": sorted({i.part for i in items if i.power_basis == "typical"}),
        "gpu_racks": gpu_racks, "network_racks": network_racks, "gpu_rack_kw": racks.kw("gpu"),
        "network_rack_kw": racks.kw("network"), "servers_kw": _r(servers_kw), "switches_kw": _r(switches_kw),
        "optics_kw": _r(optics_kw), "cables_kw": _r(cables_kw), "storage_kw": _r(storage_kw),
        "appliances_kw": _r(appliances_kw), "it_kw": _r(it_kw),
        "it_kw_known": _r(sum(i.counted_w for i in items) / 1000), "pue": pue, "facility_kw": _r(facility_kw),
        "heat_kw_by_cooling": heat, "hours_per_year": hours_per_year(),
        "electricity_usd_per_kwh": r.electricity_usd_per_kwh, "unknown_power_parts": unknown,
    }
