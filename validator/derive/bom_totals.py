"""The BOM's price totals: capex of the priced lines, subtotals per category, and what is unpriced.

A capex is never silently partial: the unpriced lines are counted and named next to it, and
`capex_complete` says whether the total covers every line. Quantities are totalled per category only
(a count of transceivers is meaningful, a count of transceivers plus racks is not).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from validator.derive.bom import Item


def totals(items: list[Item], power: dict[str, Any]) -> dict[str, Any]:
    priced = [i for i in items if i.extended_price is not None]
    unpriced = [i for i in items if i.extended_price is None and not i.included_in]
    by_category: dict[str, float] = defaultdict(float)
    for i in priced:
        by_category[i.category] += i.extended_price or 0.0
    confidence: dict[str, float] = defaultdict(float)
    for i in priced:
        confidence[i.quote.confidence if i.quote else "catalog"] += i.extended_price or 0.0
    return {
        "capex_usd": round(sum(i.extended_price or 0.0 for i in priced), 2),
        "capex_complete": not unpriced,
        "capex_by_category_usd": {k: round(v, 2) for k, v in sorted(by_category.items())},
        "capex_by_confidence_usd": {k: round(v, 2) for k, v in sorted(confidence.items())},
        "priced_lines": len(priced), "unpriced_lines": len(unpriced),
        "unpriced_parts": sorted({i.part for i in unpriced}),
        "lines": len(items),
        "qty_by_category": dict(sorted(Counter({c: sum(i.qty for i in items if i.category == c)
                                                 for c in {i.category for i in items}}).items())),
        "it_kw": power["it_kw"], "facility_kw": power["facility_kw"],
    }
