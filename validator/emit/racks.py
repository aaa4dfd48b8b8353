"""Rack elevations as text, CSV and JSON (`clusterplan racks`; shape: schemas/racks.schema.json).

Text is compact: racks with the same contents (the same models in the same rack units, the same power
and cooling) are shown once, with the list of the others; device names are the first rack's.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from validator.derive.elevation import Elevations, RackView, Slot
from validator.emit.escape import csv_row, to_json

RACK_COLUMNS = ("site", "hall", "row", "rack", "rack_kind", "ru_top", "ru_bottom", "height", "kind", "device",
                "role", "fabric", "model", "power_w", "weight_kg", "rack_power_kw", "rack_budget_kw")


def racks_json(elev: Elevations) -> str:
    from pydantic import TypeAdapter

    data = TypeAdapter(Elevations).dump_python(elev, mode="json")
    return to_json(data, indent=1) + "\n"


def racks_csv(elev: Elevations) -> str:
    """One row per slot (empty ranges included) and per part inside a rack without rack units."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RACK_COLUMNS)
    for rack in elev.racks:
        for s in [*rack.slots, *rack.inside]:
            writer.writerow(csv_row((
                rack.site, f"H{rack.hall}", f"R{rack.row:02d}", rack.name, rack.kind, s.ru_top, s.ru_bottom,
                s.height, s.kind, s.device, s.role, s.fabric, s.model, s.power_w, s.weight_kg,
                rack.power.total_kw, rack.power.budget_kw)))
    return out.getvalue()


def _signature(rack: RackView) -> tuple[object, ...]:
    slots = tuple((s.ru_bottom, s.height, s.kind, s.role, s.fabric, s.model, s.power_w) for s in rack.slots)
    inside = tuple((s.kind, s.role, s.model) for s in rack.inside)
    p, c = rack.power, rack.cooling
    return (rack.kind, slots, inside, p.total_kw, p.known_kw, tuple(p.unknown), c.type, c.rear_door, c.cdu,
            rack.weight_kg)


def _spans(racks: list[RackView]) -> str:
    """Names of racks in floor order, runs of neighbours as first..last."""
    parts: list[str] = []
    i = 0
    while i < len(racks):
        j = i
        while j + 1 < len(racks) and racks[j + 1].index == racks[j].index + 1:
            j += 1
        parts.append(racks[i].name if i == j else f"{racks[i].name}..{racks[j].name}")
        i = j + 1
    return ", ".join(parts)


def _kw(x: float | None) -> str:
    return "unknown" if x is None else f"{x:,.2f}"


def _power(rack: RackView) -> str:
    p = rack.power
    total = f"{p.total_kw:,.2f} kW" if p.total_kw is not None else \
        f"unknown (at least {p.known_kw:,.2f} kW; no power figure for {', '.join(p.unknown)})"
    over = "  OVER BUDGET" if p.over_budget else ""
    return (f"power {total} of {p.budget_kw:g} kW budget (devices {_kw(p.devices_kw)}, optics {_kw(p.optics_kw)}, "
            f"cable ends {_kw(p.cables_kw)}){over}")


def _cooling(rack: RackView) -> str:
    c = rack.cooling
    what = c.type + (f" {c.rear_door}" if c.rear_door else "") + (f", CDU {c.cdu} #{c.cdu_number}" if c.cdu else "")
    if c.cdu_rack_units:
        what += f" (in-rack, {c.cdu_rack_units}U)"
    weight = "unknown" if rack.weight_kg is None else f"{rack.weight_kg:,.1f} kg"
    if rack.weight_kg is None and rack.weight_known_kg:
        weight += f" (at least {rack.weight_known_kg:,.1f} kg)"
    return f"cooling {what}; weight {weight} (devices, not the empty rack)"


def _slot_line(s: Slot) -> str:
    ru = (f"{s.ru_top}" if s.height == 1 else f"{s.ru_top}-{s.ru_bottom}") if s.height else "-"
    if s.kind == "empty":
        return f"  {ru:>7}  empty ({s.height}U)"
    watts = "" if s.power_w is None else f"{s.power_w:,.0f} W"
    role = s.role if not s.fabric else f"{s.fabric} {s.role}"
    more = "  ABOVE THE RACK" if s.beyond_rack else ""
    return f"  {ru:>7}  {s.device or '':<34} {role or '':<22} {s.model or '':<22} {s.height}U {watts:>9}{more}"


def _rack_lines(rack: RackView, same: list[RackView]) -> Iterator[str]:
    where = f"site {rack.site}, hall H{rack.hall}, row R{rack.row:02d}, position {rack.position:02d}"
    group = "" if rack.group is None else f", group {rack.group}"
    yield f"rack {rack.name}  {rack.kind}{group}  {where}  ({rack.model}, {rack.rack_units}U, {rack.ru_used}U used)"
    if same:
        yield f"  racks {_spans([rack, *same])}: identical ({len(same) + 1}), shown once"
    yield f"  {_power(rack)}"
    yield f"  {_cooling(rack)}"
    if rack.reserved_ru:
        yield f"  {rack.reserved_ru}U kept free for patch panels and cable managers (not placed)"
    for s in rack.slots:
        yield _slot_line(s)
    for s in rack.inside:
        yield f"  {'inside':>7}  {s.device or '':<34} {s.role or '':<22} {s.model or '':<22} (no rack unit of its own)"


def distinct_racks(elev: Elevations) -> list[tuple[RackView, list[RackView]]]:
    """Each distinct rack (the first of its kind in floor order) with the racks identical to it."""
    groups: dict[tuple[object, ...], list[RackView]] = {}
    for rack in elev.racks:
        groups.setdefault(_signature(rack), []).append(rack)
    return [(same[0], same[1:]) for same in groups.values()]


def rack_spans(racks: list[RackView]) -> str:
    """Names of racks in floor order, runs of neighbours as first..last."""
    return _spans(racks)


def racks_text(elev: Elevations) -> str:
    total = "unknown" if elev.power_total_kw is None else f"{elev.power_total_kw:,.1f} kW"
    lines = [f"{elev.name}  {elev.file}",
             f"{elev.racks_total} racks, {elev.ru_used_total} RU used, power {total} "
             f"(known {elev.power_known_kw:,.1f} kW); power basis: {elev.power_basis}", ""]
    for first, same in distinct_racks(elev):
        lines += [*_rack_lines(first, same), ""]
    return "\n".join(lines)
