"""FAC003 rack-space: Rack units within the rack."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def rack_space(ctx: Context) -> Iterator[Hit]:
    """The rack units used in every rack (servers, rack systems, top-of-rack and management switches) do
    not exceed the rack's height; the fullest rack is named.

    Source: server and switch rack units from the catalog; EIA-310 rack units.
    Fix: fewer servers per rack, a taller rack model, or switches placed in network racks.
    Example:
        compute: {server: dgx-h100, servers_per_rack: 7}   # 7 x 8U = 56U in a 48U rack
    """
    plan = ctx.topology.racks      # its rack_units: the rack model's, 48 when the catalog gives none
    full = max(plan.racks, key=lambda r: (r.ru_used, -r.index), default=None)
    if full is not None and full.ru_used > plan.rack_units:
        name = ctx.derived.layout.rack_name(full.index)
        what = ", ".join(f"{n} x {k}" for k, n in sorted(_kinds(full).items()))
        path = ("compute", "servers_per_rack") if full.kind == "gpu" else ("site", "rack", "model")
        yield Hit(f"{full.kind} rack {name}: {full.ru_used} RU used ({what}) in a {plan.rack_units}U rack", path)


def _kinds(rack: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for unit in getattr(rack, "units", []):      # every unit stands at least 1U (validator.expand.racks)
        out[unit.kind] = out.get(unit.kind, 0) + 1
    return out


RULE = Rule("FAC003", "rack-space", "Rack units within the rack", "error", "all", rack_space)
