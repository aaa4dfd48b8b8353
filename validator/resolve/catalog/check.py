"""`clusterplan catalog check`: the catalog entries missing power, price, cage or source.

A gap is not an error: a figure no public source gives stays null, and the check says so, with the
price book's note where it has one. It also reports price-book entries naming no catalog part.
"""

from __future__ import annotations

from typing import Any

from validator.base.facts import fact
from validator.resolve.catalog import Catalog
from validator.resolve.prices import PriceTable

CAGES = ("OSFP", "QSFP-DD", "QSFP112", "QSFP56", "QSFP28", "SFP28", "RJ45")
PRICED_KINDS = ("gpu", "server", "nic", "switch", "transceiver", "cable", "facility")
# BOM lines the design describes rather than the catalog (storage.nodes): a book may price them too
DESIGN_PARTS = frozenset({"storage-node"})


@fact
class Gap:
    kind: str
    id: str
    field: str          # power, price, cage, top, source
    detail: str


def _cage_gaps(kind: str, entry_id: str, where: str, form: str | None, top: str | None) -> list[Gap]:
    if form not in CAGES:
        return [Gap(kind, entry_id, "cage", f"{where}form factor {form!r} is not one of {', '.join(CAGES)}")]
    if form == "OSFP" and top is None:
        return [Gap(kind, entry_id, "top", f"{where}OSFP without `top` (finned or flat)")]
    return []


def _power_gap(kind: str, entry: Any) -> str | None:
    if kind == "server":
        return None if entry.max_power_w is not None else "no max_power_w"
    if kind == "switch":
        if entry.power_max_w is None and entry.power_typical_w is None:
            return "no power figure"
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
            if len(entry.source.strip()) < 8:
                gaps.append(Gap(kind, entry.id, "source", "no source"))
    known = {i for kind in PRICED_KINDS for i in catalog.entries[kind]} | DESIGN_PARTS
    for loaded in (*prices.defaults, *prices.books):
        for part in sorted(set(loaded.book.prices) - known):
            gaps.append(Gap("price book", part, "source", f"{loaded.label} prices a part the catalog does not have"))
    return gaps
