"""The BOM's price totals: capex of the priced lines as a range, subtotals per category and basis, and
what is unpriced.

A capex is never silently partial: the unpriced lines are counted and named next to it, and
`capex_complete` says whether the total covers every line. The range: each line's low / expected / high
(its price's own range, else its basis's spread: validator/data/price_ranges.yaml) summed, so
`capex_low` <= `capex_expected` (= `capex_usd`) <= `capex_high`. `capex_by_basis_usd` splits the expected
capex by price basis and `weak_price_parts` names the parts priced on a derived or proxy figure.
Quantities are totalled per category only (a count of transceivers is meaningful, a count of
transceivers plus racks is not).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from validator.resolve.prices import WEAK_BASES

if TYPE_CHECKING:
    from validator.derive.bom import Item


def totals(items: list[Item], power: dict[str, Any]) -> dict[str, Any]:
    priced = [i for i in items if i.extended_price is not None]
    unpriced = [i for i in items if i.extended_price is None and not i.included_in]
    by_category: dict[str, float] = defaultdict(float)
    for i in priced:
        by_category[i.category] += i.extended_price or 0.0
    basis: dict[str, float] = defaultdict(float)
    for i in priced:
        basis[i.quote.basis if i.quote else "design"] += i.extended_price or 0.0
    expected = round(sum(i.extended_price or 0.0 for i in priced), 2)
    return {
        "capex_usd": expected,
        "capex_low": round(sum(i.extended_low or 0.0 for i in priced), 2),
        "capex_expected": expected,
        "capex_high": round(sum(i.extended_high or 0.0 for i in priced), 2),
        "capex_complete": not unpriced,
        "capex_by_category_usd": {k: round(v, 2) for k, v in sorted(by_category.items())},
        "capex_by_basis_usd": {k: round(v, 2) for k, v in sorted(basis.items())},
        "weak_price_parts": sorted({i.part for i in priced if i.quote and i.quote.basis in WEAK_BASES}),
        "priced_lines": len(priced), "unpriced_lines": len(unpriced),
        "unpriced_parts": sorted({i.part for i in unpriced}),
        "lines": len(items),
        "qty_by_category": dict(sorted(Counter({c: sum(i.qty for i in items if i.category == c)
                                                 for c in {i.category for i in items}}).items())),
        "it_kw": power["it_kw"], "facility_kw": power["facility_kw"],
    }
