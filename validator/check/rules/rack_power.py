"""FAC001 rack-power: Rack power within budget."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def rack_power(ctx: Context) -> Iterator[Hit]:
    """Every rack's power stays within the power the facility delivers to it: GPU racks (servers,
    top-of-rack switches, the optics in them, their share of active cables) and network racks alike,
    counted as `clusterplan racks` and the BOM count it (validator.derive.rack_power). The heaviest
    rack over the budget is named, with how many are over.

    Source: server maximum power from the catalog (e.g. DGX H100 10.2 kW; 4 per rack = 40.8 kW,
    DGX SuperPOD RA: "power consumption per rack exceeds 40 kW"); switch and optics power from the
    catalog, each with its source.
    Fix: fewer servers per rack, or a larger `site.rack.power_budget_kw`.
    Example:
        compute: {server: dgx-h100, count: 32, servers_per_rack: 5}   # 5 x 10.2 kW = 51 kW > a 44 kW budget
    """
    loads = ctx.derived.rack_power
    budget = ctx.design.site.rack.power_budget_kw
    server = ctx.resolved.server
    if server.max_power_w is None:
        yield Hit(f"server {server.id} has no max_power_w in the catalog; rack power cannot be checked",
                  ("compute", "server"), severity="warning",
                  hint="set max_power_w for the server in a design catalog file")
    # a rack whose known part alone is over the budget is over, whatever its unknown parts draw
    over = [r for r in loads.loads if r.known_w / 1000 > budget + 1e-9]
    if not over:
        return
    worst = max(over, key=lambda r: (r.known_w, -r.rack))
    name = ctx.derived.layout.rack_name(worst.rack)
    what = f"{worst.known_w / 1000:.1f} kW"
    if worst.unknown:
        what = f"at least {what} (no power figure for {', '.join(sorted(worst.unknown))})"
    parts = f"devices {worst.devices_w / 1000:.1f}, optics {worst.optics_w / 1000:.2f}, " \
            f"cable ends {worst.cables_w / 1000:.2f} kW"
    if worst.kind == "gpu":
        servers = sum(1 for u in ctx.topology.racks.racks[worst.rack].units if u.kind == "server")
        parts = f"{servers} x {server.id} at {(server.max_power_w or 0) / 1000:g} kW; " + parts
    more = f"; {len(over)} racks over the budget" if len(over) > 1 else ""
    path = ("compute", "servers_per_rack") if worst.kind == "gpu" else ("site", "rack", "power_budget_kw")
    yield Hit(f"{'GPU' if worst.kind == 'gpu' else worst.kind} rack {name}: {what} ({parts}) > {budget:g} kW "
              f"budget{more}", path)


RULE = Rule("FAC001", "rack-power", "Rack power within budget", "error", "all", rack_power)
