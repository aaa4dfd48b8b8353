"""Facility rules (FAC): power, cooling and space per rack."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit
from validator.check.context import Context


def _rack_kw(ctx: Context) -> float | None:
    r = ctx.resolved
    if r.server.max_power_w is None:
        return None
    return float(ctx.design.compute.servers_per_rack * r.server.max_power_w / 1000)


def rack_power(ctx: Context) -> Iterator[Hit]:
    """The GPU rack's maximum power stays within the power the facility delivers to it.

    Source: server maximum power from the catalog (e.g. DGX H100 10.2 kW; 4 per rack = 40.8 kW,
    DGX SuperPOD RA).
    Fix: fewer servers per rack, or a larger `site.rack.power_budget_kw`.
    Example:
        compute: {server: dgx-h100, count: 32, servers_per_rack: 5}   # 5 x 10.2 kW = 51 kW > a 44 kW budget
    """
    kw = _rack_kw(ctx)
    budget = ctx.design.site.rack.power_budget_kw
    if kw is None:
        yield Hit(f"server {ctx.resolved.server.id} has no max_power_w in the catalog; rack power cannot be checked",
                  ("compute", "server"), severity="warning",
                  hint="set max_power_w for the server in a design catalog file")
    elif kw > budget:
        per_server = kw / ctx.design.compute.servers_per_rack
        yield Hit(f"{ctx.design.compute.servers_per_rack} x {per_server:g} kW = {kw:.1f} kW per rack > {budget:g} kW "
                  "budget", ("compute", "servers_per_rack"))


def cooling_density(ctx: Context) -> Iterator[Hit]:
    """The cooling type handles the rack's heat: air to about 40 kW, rear-door heat exchangers to
    about 75 kW (or the door's rating), direct liquid beyond; liquid racks need CDU capacity, and
    liquid-cooled servers need liquid cooling.

    Source: shared/docs/hardware-notes.md section 7 (air ~40 kW with containment; active RDHx ~40-75 kW;
    DLC + CDU above ~100 kW).
    Fix: change `site.rack.cooling`, add a rear door or CDU with enough capacity, or spread the servers.
    Example:
        site: {rack: {power_budget_kw: 44, cooling: air}}   # 4 x DGX H100 = 40.8 kW: beyond air cooling
    """
    rack = ctx.design.site.rack
    kw = _rack_kw(ctx)
    cat = ctx.resolved.catalog
    base = ("site", "rack")
    if ctx.resolved.server.cooling == "liquid" and rack.cooling != "liquid":
        yield Hit(f"server {ctx.resolved.server.id} is liquid-cooled but the rack cooling is {rack.cooling}",
                  (*base, "cooling"))
    if kw is None:
        return
    if rack.cooling == "air" and kw > ctx.threshold("air_cooling_max_kw"):
        yield Hit(f"{kw:.1f} kW per rack is beyond air cooling (~{ctx.threshold('air_cooling_max_kw'):g} kW)",
                  (*base, "cooling"))
    if rack.cooling == "rear-door":
        door = cat.facility(rack.rear_door) if rack.rear_door else None
        limit = door.capacity_kw if door and door.capacity_kw else ctx.threshold("rear_door_max_kw")
        if kw > limit:
            yield Hit(f"{kw:.1f} kW per rack exceeds the rear-door heat exchanger's {limit:g} kW",
                      (*base, "rear_door" if rack.rear_door else "cooling"))
    if rack.cooling == "liquid":
        if rack.cdu is None:
            yield Hit("liquid-cooled racks need a CDU (site.rack.cdu)", (*base, "cooling"))
            return
        cdu = cat.facility(rack.cdu)
        racks = rack.racks_per_cdu or 1
        if cdu.capacity_kw is not None and racks * kw > cdu.capacity_kw:
            yield Hit(f"{racks} racks x {kw:.1f} kW = {racks * kw:.1f} kW per CDU > {cdu.capacity_kw:g} kW capacity",
                      (*base, "racks_per_cdu" if rack.racks_per_cdu else "cdu"))


def rack_space(ctx: Context) -> Iterator[Hit]:
    """The rack units used in every rack (servers, rack systems, top-of-rack and management switches) do
    not exceed the rack's height; the fullest rack is named.

    Source: server and switch rack units from the catalog; EIA-310 rack units.
    Fix: fewer servers per rack, a taller rack model, or switches placed in network racks.
    Example:
        compute: {server: dgx-h100, servers_per_rack: 7}   # 7 x 8U = 56U in a 48U rack
    """
    plan = ctx.topology.racks
    if not plan.rack_units:
        return
    full = max(plan.racks, key=lambda r: (r.ru_used, -r.index), default=None)
    if full is not None and full.ru_used > plan.rack_units:
        name = ctx.derived.layout.rack_name(full.index)
        what = ", ".join(f"{n} x {k}" for k, n in sorted(_kinds(full).items()))
        path = ("compute", "servers_per_rack") if full.kind == "gpu" else ("site", "rack", "model")
        yield Hit(f"{full.kind} rack {name}: {full.ru_used} RU used ({what}) in a {plan.rack_units}U rack", path)


def _kinds(rack: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for unit in getattr(rack, "units", []):
        if unit.height:
            out[unit.kind] = out.get(unit.kind, 0) + 1
    return out
