"""FAC002 cooling-density: Cooling handles the rack density."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import rack_kw


def cooling_density(ctx: Context) -> Iterator[Hit]:
    """The cooling type handles the rack's heat: air to about 41 kW, rear-door heat exchangers to
    about 75 kW (or the door's rating), direct liquid beyond; liquid racks need CDU capacity, and
    liquid-cooled servers need liquid cooling.

    Source: NVIDIA DGX SuperPOD RAs (DGX H100: 4 per rack at 40.8 kW air-cooled with rear doors;
    GB200 NVL72: direct liquid cooling with CDUs at about 120-140 kW); ASHRAE TC 9.9 liquid cooling
    guidance (air to about 41 kW a rack with perfect containment); rear-door heat exchanger families of
    35-75 kW (HPE/Motivair QuickSpecs).
    Fix: change `site.rack.cooling`, add a rear door or CDU with enough capacity, or spread the servers.
    Example:
        site: {rack: {power_budget_kw: 60, cooling: air}}
        compute: {servers_per_rack: 5}   # 5 x DGX H100 = 51 kW: beyond air cooling
    """
    rack = ctx.design.site.rack
    kw = rack_kw(ctx)
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


RULE = Rule("FAC002", "cooling-density", "Cooling handles the rack density", "error", "all", cooling_density)
