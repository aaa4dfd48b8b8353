"""BOM001 unpriced-lines: Every BOM line has a price."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.rules.unknown_power import line_path, unresolved


def unpriced_lines(ctx: Context) -> Iterator[Hit]:
    """Every line of the bill of materials has a price, so the capex covers the whole design. An unpriced
    line is never counted as zero: the capex is then partial, and the TCO and cost per GPU-hour unknown.

    Source: the built-in price book (validator/resolve/catalog/data/prices/street.yaml) prices every
    part with a public figure and says which have none; `clusterplan catalog check` lists them.
    Fix: add the parts to a price book of the repository (`prices:` in .clusterplan.yaml) or pass one with
    `--prices`; or set `costs.prices_usd` in the design.
    Example:
        compute: {server: hgx-b300, count: 4}   # no public price for an OEM HGX B300 server
    """
    bom = ctx.derived.bom
    # a link left without media (UNRESOLVED-...) is NET005's or NET011's error, with its cause; not a price gap
    unpriced = [i for i in bom.items if i.extended_price is None and not i.included_in and not unresolved(i.part)]
    if not unpriced:
        return
    table = ctx.resolved.costing.prices
    parts = sorted({i.part for i in unpriced})
    why = [f"{p} ({table.why_unpriced(p) or 'in no price book'})" for p in parts]
    yield Hit(f"{len(unpriced)} BOM line(s) unpriced: {', '.join(why)}; the capex "
              f"${bom.totals['capex_usd']:,.0f} covers the other lines only",
              line_path(ctx, unpriced[0].category, unpriced[0].fabric, unpriced[0].part),
              hint="add the parts to a price book (.clusterplan.yaml `prices:` or --prices) or to "
                   "costs.prices_usd")


RULE = Rule("BOM001", "unpriced-lines", "Every BOM line has a price", "info", "all", unpriced_lines)
