"""FAC005 network-rack-cooling: Network racks within their cooling."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def network_rack_cooling(ctx: Context) -> Iterator[Hit]:
    """Network and storage racks are cooled as GPU racks are, with the same limit: an air-cooled rack
    (every rack without a GPU is air-cooled unless a switch in it is liquid-cooled) holds no more than
    air cooling removes, about 41 kW. Its power is counted as FAC001 counts it (devices, optics in
    their cages, the rack's share of active cables). The rack plan fills an air-cooled network rack up
    to this limit (less the out-of-band leaf placed in it), so a rack over it holds a device beyond the
    limit on its own, or a site that lowered the limit. The heaviest rack is named, with how many are over.

    Source: the air-cooling ceiling of FAC002 (ASHRAE TC 9.9 guidance, ~41 kW with containment);
    switch power from the catalog, each figure with its source (e.g. QM9700 1,720 W maximum: 44 of them
    in one 48U rack draw 75.7 kW, beyond it).
    Fix: a site that cools more sets `thresholds.air_cooling_max_kw`; a switch beyond the limit on its
    own needs a liquid-cooled model.
    Example:
        thresholds: {air_cooling_max_kw: 0.05}   # no switch is cooled by 50 W of air
    """
    limit = ctx.threshold("air_cooling_max_kw")
    fabrics, plan, loads = ctx.topology.fabrics, ctx.topology.racks, ctx.derived.rack_power
    over = [load for rack, load in zip(plan.racks, loads.loads, strict=True)
            if rack.kind != "gpu" and load.known_w / 1000 > limit + 1e-9 and rack.cooling(fabrics, "air") == "air"]
    if not over:
        return
    worst = max(over, key=lambda r: (r.known_w, -r.rack))
    what = ", ".join(f"{n} x {m}" for m, n in sorted(_models(ctx, worst.rack).items()))
    more = f"; {len(over)} racks over it" if len(over) > 1 else ""
    yield Hit(f"{worst.kind} rack {ctx.derived.layout.rack_name(worst.rack)}: {worst.known_w / 1000:.2f} kW "
              f"({what}) on air, beyond air cooling (~{limit:g} kW){more}", ("site", "rack", "cooling"))


def _models(ctx: Context, rack: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for unit in ctx.topology.racks.racks[rack].units:
        tier = ctx.topology.fabrics[unit.fabric].tier(unit.role) if unit.kind == "switch" else None
        model = tier.switch.id if tier is not None else unit.kind
        out[model] = out.get(model, 0) + 1
    return out


RULE = Rule("FAC005", "network-rack-cooling", "Network racks within their cooling", "error", "all",
            network_rack_cooling, thresholds=("air_cooling_max_kw",))
