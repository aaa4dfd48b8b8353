"""The design as the objects a source of truth holds (Nautobot's data model; NetBox's is the same shape).

`dcim_objects(derived)` turns the rack elevations and the cabling plan, facts computed once in derive, into
plain records keyed by their natural key, in the order a DCIM needs them created:

    tags -> location types -> locations (site > hall > row) -> manufacturers -> device types -> roles
    -> racks -> devices (rack, position, face) -> interfaces -> cables (A/Z interface, length, label)
    -> power panels (one per hall) -> power feeds (one per rack)

Every record is what clusterplan asserts about that object; the sync (validator/workflows/dcim.py) compares
it field by field with the live DCIM. Names are the names of the cabling plan and the rack elevations, so a
technician finds the same device, port and cable in all three. The export is deterministic: objects sorted by
their keys, no timestamps.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from validator.derive import Derived
from validator.derive.cabling import CABLING_COLUMNS

TAG = "clusterplan"
STATUS = "Planned"
# the order in which object types are created (and the reverse, deleted)
KINDS = ("location_types", "locations", "manufacturers", "device_types", "roles", "racks", "devices",
         "interfaces", "cables", "power_panels", "power_feeds")


def natural_key(kind: str, r: dict[str, Any]) -> tuple[str, ...]:
    """The key that names a record of `kind` in the design and in the DCIM (a name, or names joined)."""
    if kind == "device_types":
        return (r["manufacturer"], r["model"])
    if kind == "interfaces":
        return (r["device"], r["name"])
    if kind == "cables":
        return (r["a_device"], r["a_interface"], r["z_device"], r["z_interface"])
    if kind == "power_feeds":
        return (r["power_panel"], r["name"])
    return (r["name"],)


@dataclass
class DcimObjects:
    """Per kind: natural key -> the fields clusterplan asserts. Keys are tuples of names."""

    site: str
    objects: dict[str, dict[tuple[str, ...], dict[str, Any]]] = field(
        default_factory=lambda: {k: {} for k in KINDS})

    def add(self, kind: str, key: tuple[str, ...], record: dict[str, Any]) -> None:
        self.objects[kind].setdefault(key, record)

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.objects.items()}

    def as_dict(self) -> dict[str, Any]:
        """JSON: per kind, the records sorted by key (schemas/dcim.schema.json)."""
        return {"version": 1, "site": self.site, "tag": TAG, "status": STATUS,
                "objects": {k: [v[key] for key in sorted(v)] for k, v in self.objects.items()}}


def _vendor(derived: Derived, model: str | None) -> str:
    catalog = derived.topology.resolved.catalog
    for kind in ("server", "switch", "facility"):
        entry = catalog.find(kind, model) if model else None
        if entry is not None and getattr(entry, "vendor", None):
            return str(entry.vendor)
    return "Generic"


def _hall(site: str, hall: int) -> str:
    return f"{site} H{hall}"


def _row(site: str, hall: int, row: int) -> str:
    return f"{site} H{hall} R{row:02d}"


def _locations(out: DcimObjects, racks: list[Any]) -> None:
    site = out.site
    out.add("location_types", ("Site",), {"name": "Site", "parent": None, "nestable": False, "content_types": []})
    out.add("location_types", ("Hall",), {"name": "Hall", "parent": "Site", "nestable": False,
                                          "content_types": ["dcim.powerpanel"]})
    out.add("location_types", ("Row",), {"name": "Row", "parent": "Hall", "nestable": False,
                                         "content_types": ["dcim.device", "dcim.rack"]})
    out.add("locations", (site,), {"name": site, "location_type": "Site", "parent": None})
    for r in racks:
        out.add("locations", (_hall(site, r.hall),), {"name": _hall(site, r.hall), "location_type": "Hall",
                                                      "parent": site})
        out.add("locations", (_row(site, r.hall, r.row),), {"name": _row(site, r.hall, r.row), "location_type": "Row",
                                                            "parent": _hall(site, r.hall)})


def _racks_and_devices(out: DcimObjects, derived: Derived, racks: list[Any]) -> None:
    site = out.site
    for r in racks:
        row = _row(site, r.hall, r.row)
        out.add("racks", (r.name,), {"name": r.name, "location": row, "u_height": r.rack_units,
                                     "comments": f"clusterplan: {r.kind} rack, position {r.position} in its row"})
        for s in r.slots:
            if s.device is None or s.kind == "empty":
                continue
            model = s.model or s.kind
            vendor = _vendor(derived, s.model)
            role = s.role or s.kind
            out.add("manufacturers", (vendor,), {"name": vendor})
            out.add("device_types", (vendor, model), {"manufacturer": vendor, "model": model,
                                                       "u_height": max(s.height, 0)})
            out.add("roles", (role,), {"name": role, "content_types": ["dcim.device"]})
            out.add("devices", (s.device,), {
                "name": s.device, "device_type": model, "role": role, "location": row, "rack": r.name,
                "position": s.ru_bottom if s.height > 0 else None, "face": "front" if s.height > 0 else None})
        feed_panel = f"{_hall(site, r.hall)} panel"
        out.add("power_panels", (feed_panel,), {"name": feed_panel, "location": _hall(site, r.hall)})
        out.add("power_feeds", (feed_panel, f"{r.name} feed"), {
            "name": f"{r.name} feed", "power_panel": feed_panel, "rack": r.name,
            "comments": f"clusterplan: rack budget {r.power.budget_kw:g} kW"})


IFACE_TYPES = {1.0: "1000base-t", 10.0: "10gbase-x-sfpp", 25.0: "25gbase-x-sfp28", 100.0: "100gbase-x-qsfp28",
               200.0: "200gbase-x-qsfp56", 400.0: "400gbase-x-osfp", 800.0: "800gbase-x-osfp"}


def _iface_type(speed_gbps: float, media: str) -> str:
    """Nautobot interface type by speed (the physical form of a port follows its module; `other` is honest)."""
    return IFACE_TYPES.get(speed_gbps, "other")


COL = {name: i for i, name in enumerate(CABLING_COLUMNS)}


def cable_label(row: tuple[Any, ...]) -> str:
    """The cable id the cabling plan prints for both ends of the cable."""
    return str(row[COL["cable_id"]])


CABLE_TYPES = {"mmf": "mmf", "smf": "smf", "dac": "dac-passive", "acc": "dac-active", "aec": "dac-active",
               "aoc": "aoc", "copper": "cat6", "cat6": "cat6"}


def interface_name(out: DcimObjects, device: str, fabric: str, port: str) -> str:
    """A switch's ports are numbered within the switch; a server's and a storage node's within each fabric
    (compute port 1 and storage port 1 are two NICs), so theirs carry the fabric: `compute-1`."""
    role = out.objects["devices"].get((device,), {}).get("role")
    return port if role in SWITCH_ROLES or port.startswith(fabric) else f"{fabric}-{port}"


SWITCH_ROLES = ("leaf", "spine", "core")


def _cables(out: DcimObjects, rows: Iterator[tuple[Any, ...]]) -> None:
    devices = out.objects["devices"]
    for row in rows:
        fabric, a_dev, z_dev = str(row[COL["fabric"]]), str(row[COL["a_device"]]), str(row[COL["z_device"]])
        if (a_dev,) not in devices or (z_dev,) not in devices:
            continue
        speed, media, run_m = float(row[COL["speed_gbps"]]), str(row[COL["media"]]), row[COL["run_m"]]
        ends = [(a_dev, interface_name(out, a_dev, fabric, str(row[COL["a_interface"]]))),
                (z_dev, interface_name(out, z_dev, fabric, str(row[COL["z_interface"]])))]
        for dev, name in ends:
            out.add("interfaces", (dev, name), {"device": dev, "name": name, "type": _iface_type(speed, media),
                                                "description": f"{fabric} {speed:g}G"})
        a, z = sorted(ends)
        out.add("cables", (*a, *z), {"a_device": a[0], "a_interface": a[1], "z_device": z[0], "z_interface": z[1],
                                     "label": cable_label(row), "type": CABLE_TYPES.get(media, ""),
                                     "length": _metres(row[COL["length_class_m"]], run_m),
                                     "length_unit": "m"})


def _metres(length_class: Any, run_m: Any) -> int | None:
    """The cable's length in whole metres (a DCIM keeps an integer): the length class it is bought at, else
    the planned run rounded up."""
    for value in (length_class, run_m):
        if value not in (None, ""):
            return max(1, math.ceil(float(value)))
    return None


def dcim_objects(derived: Derived) -> DcimObjects:
    """Everything the design puts into a DCIM, keyed and ordered for an idempotent sync."""
    from validator.derive.elevation import elevations

    racks = elevations(derived).racks
    out = DcimObjects(derived.topology.resolved.design.metadata.name)
    _locations(out, racks)
    _racks_and_devices(out, derived, racks)
    _cables(out, derived.cabling.rows())
    return out

