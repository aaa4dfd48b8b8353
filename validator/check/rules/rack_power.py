"""FAC001 rack-power: Rack power within budget."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.shared import rack_kw


def rack_power(ctx: Context) -> Iterator[Hit]:
    """The GPU rack's maximum power stays within the power the facility delivers to it.

    Source: server maximum power from the catalog (e.g. DGX H100 10.2 kW; 4 per rack = 40.8 kW,
    DGX SuperPOD RA).
    Fix: fewer servers per rack, or a larger `site.rack.power_budget_kw`.
    Example:
        compute: {server: dgx-h100, count: 32, servers_per_rack: 5}   # 5 x 10.2 kW = 51 kW > a 44 kW budget
    """
    kw = rack_kw(ctx)
    budget = ctx.design.site.rack.power_budget_kw
    if kw is None:
        yield Hit(f"server {ctx.resolved.server.id} has no max_power_w in the catalog; rack power cannot be checked",
                  ("compute", "server"), severity="warning",
                  hint="set max_power_w for the server in a design catalog file")
    elif kw > budget:
        per_server = kw / ctx.design.compute.servers_per_rack
        yield Hit(f"{ctx.design.compute.servers_per_rack} x {per_server:g} kW = {kw:.1f} kW per rack > {budget:g} kW "
                  "budget", ("compute", "servers_per_rack"))


RULE = Rule("FAC001", "rack-power", "Rack power within budget", "error", "all", rack_power)
