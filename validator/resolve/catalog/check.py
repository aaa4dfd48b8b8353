"""`clusterplan catalog check`: the catalog entries missing power, price, cage, protocols or source, and every price
by basis, age and source class.

A gap is not an error: a figure no public source gives stays null, and the check says so, with the
price book's note where it has one. It also reports price-book entries naming no catalog part, a switch
maximum that does not say whether it includes optics, and a derived or proxy price without its
derivation (that one fails the check: a figure a buyer cannot retrace is not a price).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from validator.base.facts import fact
from validator.resolve.catalog import Catalog
from validator.resolve.prices import WEAK_BASES, PriceTable

CAGES = ("OSFP", "OSFP224", "QSFP-DD", "QSFP112", "QSFP56", "QSFP28", "SFP28", "RJ45")
PRICED_KINDS = ("gpu", "server", "nic", "switch", "transceiver", "cable", "facility")
# BOM lines the design describes rather than the catalog (storage.nodes, an extra endpoint named ufm): a book
# may price them too
DESIGN_PARTS = frozenset({"storage-node", "ufm"})


@fact
class Gap:
    kind: str
    id: str
    field: str          # power, price, cage, top, protocols, source
    detail: str


def _cage_gaps(kind: str, entry_id: str, where: str, form: str | None, top: str | None) -> list[Gap]:
    if form not in CAGES:
        return [Gap(kind, entry_id, "cage", f"{where}form factor {form!r} is not one of {', '.join(CAGES)}")]
    if form in ("OSFP", "OSFP224") and top is None:
        return [Gap(kind, entry_id, "top", f"{where}{form} without `top` (finned or flat)")]
    return []


def _power_gap(kind: str, entry: Any) -> str | None:
    if kind == "server":
        return None if entry.max_power_w is not None else "no max_power_w"
    if kind == "switch":
        if entry.power_max_w is None and entry.power_typical_w is None:
            return "no power figure"
        if entry.power_max_w is not None and entry.power_max_includes_optics is None:
            return "maximum without power_max_includes_optics (does it include the modules?)"
        return None if entry.power_max_w is not None else "typical only (no published maximum)"
    if kind == "nic" and entry.category == "bmc":
        return None          # on the server's board, in its power
    if kind in ("nic", "transceiver", "cable"):
        return None if entry.power_w is not None else "no power_w"
    if kind == "facility" and entry.category == "nvlink-switch-tray":
        return None if entry.power_w is not None else "no power_w (in the compute trays' share)"
    return None


def _cage(kind: str, entry: Any) -> list[Gap]:
    if kind == "nic" and entry.category != "bmc":
        return _cage_gaps(kind, entry.id, "", entry.form_factor, entry.top)
    if kind == "switch":
        return [g for i, grp in enumerate(entry.port_groups)
                for g in _cage_gaps(kind, entry.id, f"port group {i}: ", grp.form_factor, grp.top)]
    if kind == "transceiver":
        return _cage_gaps(kind, entry.id, "", entry.form_factor, entry.top)
    if kind == "cable" and entry.type in ("dac", "acc", "aoc"):
        return _cage_gaps(kind, entry.id, "", entry.form_factor, entry.top)
    return []


def catalog_gaps(catalog: Catalog, prices: PriceTable) -> list[Gap]:
    gaps: list[Gap] = []
    for kind in PRICED_KINDS:
        for entry in sorted(catalog.entries[kind].values(), key=lambda e: e.id):
            if (power := _power_gap(kind, entry)) is not None:
                gaps.append(Gap(kind, entry.id, "power", power))
            if prices.quote(entry.id, kind, getattr(entry, "price_usd", None)) is None:
                gaps.append(Gap(kind, entry.id, "price", prices.why_unpriced(entry.id) or "in no price book"))
            gaps += _cage(kind, entry)
            if kind in ("transceiver", "cable") and not entry.protocols:
                gaps.append(Gap(kind, entry.id, "protocols", "no `protocols` (infiniband, ethernet): the media "
                                "choice gives it to links of either"))
            if len(entry.source.strip()) < 8:
                gaps.append(Gap(kind, entry.id, "source", "no source"))
    known = {i for kind in PRICED_KINDS for i in catalog.entries[kind]} | DESIGN_PARTS
    for loaded in (*prices.defaults, *prices.books):
        for part in sorted(set(loaded.book.prices) - known):
            gaps.append(Gap("price book", part, "source", f"{loaded.label} prices a part the catalog does not have"))
    return gaps


@fact
class PriceRow:
    """One catalog part's price as the run would use it: basis, date, age, source class, where it comes from."""

    kind: str
    id: str
    basis: str
    date: str | None
    age_months: int | None
    source_class: str | None
    origin: str
    problem: str | None      # a derived or proxy price without its derivation


def _age_months(when: str | None, today: date) -> int | None:
    if not when:
        return None
    parts = [int(p) for p in str(when).split("-")[:2]]
    year, month = parts[0], parts[1] if len(parts) > 1 else 7     # a bare year: its middle
    return max(0, (today.year - year) * 12 + today.month - month)


def price_audit(catalog: Catalog, prices: PriceTable, today: date) -> list[PriceRow]:
    """Every priced catalog part, by basis then id."""
    rows = []
    for kind in PRICED_KINDS:
        for entry in catalog.entries[kind].values():
            q = prices.quote(entry.id, kind, getattr(entry, "price_usd", None))
            if q is None:
                continue
            problem = (f"{q.basis} price without its derivation" if q.basis in WEAK_BASES and not q.derivation
                       else None)
            rows.append(PriceRow(kind, entry.id, q.basis, q.date, _age_months(q.date, today), q.source_class,
                                 q.origin, problem))
    return sorted(rows, key=lambda r: (r.basis, r.kind, r.id))
