"""The cost of building for growth, as its own BOM line.

A fabric with `growth:` (or `planned_scalable_units:`) is built for more scalable units than it has servers
for (validator/expand/growth.py). Its switch, transceiver and cable lines count everything that is
installed; the growth line says how much of that is there for growth: the same design built for what it has
(its growth settings removed) is costed too, and the line carries the difference in switches, transceivers,
cables and capex. It is `included_in` the lines above, so the capex counts it once; `totals.growth_usd`
carries the amount for `diff`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from validator.expand.topology import Topology, build_topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom, Item

COUNTED = ("switch", "transceiver", "cable")


def growth_fabrics(topology: Topology) -> list[str]:
    """Fabrics of the design that build for growth."""
    fabrics = topology.resolved.design.fabrics
    return [name for name in ("compute", "storage", "inband") if (spec := getattr(fabrics, name)) is not None and
            (spec.growth is not None or spec.planned_scalable_units is not None)]


def without_growth(topology: Topology) -> Topology:
    """The same design built for the servers it has: every fabric's growth settings removed."""
    r = topology.resolved
    design = r.design
    specs = {name: getattr(design.fabrics, name).model_copy(update={"growth": None, "planned_scalable_units": None})
             for name in growth_fabrics(topology)}
    lean_design = design.model_copy(update={"fabrics": design.fabrics.model_copy(update=specs)})
    fabrics = {name: replace(f, spec=specs.get(name, f.spec)) for name, f in r.fabrics.items()}
    return build_topology(replace(r, design=lean_design, fabrics=fabrics))


def add_growth_line(bom: Bom, topology: Topology) -> Bom:
    """`bom` with the growth line appended when the design builds for growth (else unchanged)."""
    names = growth_fabrics(topology)
    if not names:
        return bom
    from validator.derive import Derived
    from validator.derive.bom import Item

    lean = Derived(without_growth(topology)).bom
    qty = bom.totals["qty_by_category"]
    lean_qty = lean.totals["qty_by_category"]
    extra = {c: qty.get(c, 0) - lean_qty.get(c, 0) for c in COUNTED}
    complete = bom.totals["capex_complete"] and lean.totals["capex_complete"]
    delta = round(bom.totals["capex_usd"] - lean.totals["capex_usd"], 2) if complete else None
    specs = {n: getattr(topology.resolved.design.fabrics, n) for n in names}
    sus = ", ".join(f"{n} for {s.growth.scalable_units if s.growth else s.planned_scalable_units} SU" for n, s in
                    specs.items())
    what = ", ".join(f"{'+' if v >= 0 else ''}{v:,} {c}{'es' if c == 'switch' else 's'}" for c, v in extra.items())
    line: Item = Item("growth", "growth", f"built for growth ({sus}): {what} over what the servers need",
                      1, names[0] if len(names) == 1 else "none", "site", unit_price=delta,
                      included_in="switch, transceiver and cable lines", power_basis="included")
    bom.items.append(line)
    bom.totals["lines"] += 1
    bom.totals["qty_by_category"] = dict(sorted({**qty, "growth": 1}.items()))
    bom.totals["growth_usd"] = delta
    return bom
