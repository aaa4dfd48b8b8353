"""BOM002 unknown-power: Every powered part has a power figure."""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.errors import Path
from validator.check.base import Hit, Rule
from validator.check.context import Context


def unknown_power(ctx: Context) -> Iterator[Hit]:
    """Every server, switch, transceiver, active cable and storage node in the bill of materials has a
    power figure. A part without one is not counted as zero: the IT power, facility power, energy and
    TCO are unknown until it has one (the BOM shows "unknown" and the lower bound of the known lines).

    Source: the catalog's `max_power_w` / `power_max_w` / `power_w` fields, each with its source; a part
    whose source publishes no figure keeps null (`clusterplan catalog check` lists them).
    Fix: set the figure in a design catalog file (`catalogs:`), e.g. the server's `max_power_w` from its
    vendor's sheet, or `storage.nodes.power_w`, or an appliance's `power_w` in `extra_endpoints`.
    Example:
        compute: {server: hgx-b300, count: 4}   # OEM chassis power not published
    """
    seen: set[str] = set()
    for item in ctx.derived.bom.items:
        if not item.unknown_power or item.part in seen or unresolved(item.part):
            continue
        seen.add(item.part)
        yield Hit(f"{item.category} {item.part} has no power figure: IT and facility power are unknown "
                  f"(known lines: {ctx.derived.bom.power['it_kw_known']:,.1f} kW)",
                  line_path(ctx, item.category, item.fabric, item.part),
                  hint="set its power in a design catalog file (`catalogs:`)")


def unresolved(part: str) -> bool:
    """A cable position the media choice could not fill (derive/cabling.py): NET005 or NET011 reports it."""
    return part.startswith("UNRESOLVED")


def line_path(ctx: Context, category: str, fabric: str, part: str) -> Path:
    """The design key that brings a BOM line in: the server, a fabric tier, a fabric, or the site."""
    if category == "server":
        return ("compute", "server")
    if category == "storage":
        return ("storage", "nodes")
    if category == "switch":
        fab = ctx.topology.fabrics.get(fabric)
        role = next((t.role for t in fab.tiers if t.switch.id == part), "leaf") if fab else "leaf"
        return ("fabrics", fabric, "tiers", role, "switch")
    if category == "appliance":
        return ("fabrics", fabric, "extra_endpoints")
    if fabric != "none":
        return ("fabrics", fabric)
    return ("site", "rack") if category in ("rack", "pdu", "cdu", "rdhx") else ("compute", "server")


RULE = Rule("BOM002", "unknown-power", "Every powered part has a power figure", "warning", "all", unknown_power)
