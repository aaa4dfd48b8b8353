"""Every price in the built-in book names its source and its basis, a figure without a checkable source stays
unknown (null, never 0), and the parts repriced from cost-model guesses carry the cited figure (street.yaml).

Figures: "1.6T module pricing climbed from roughly $1,200 to $2,000 through 2025" (100gmodules.com blog,
2026-06-16: a module seller's market figure, weak); the FS archived listing of a 64 x 400G NDR Quantum-2 switch,
$36,000 (web.archive.org 20240822234224, the qm9790 line); CBRE North America Data Center Trends H2 2024: the
250-500 kW asking rate $184.06 per kW-month, and CBRE's 2025 year-end release: +6.5 % to $194.95."""

from __future__ import annotations

import pytest

from validator.base.tables import sourced
from validator.resolve.catalog import builtin_catalog
from validator.resolve.prices import WEAK_BASES, builtin_books

BOOK = next(b.book for b in builtin_books() if b.label == "built-in street")
PRICED = {part: BOOK.entry(part) for part in BOOK.prices}

MODULE_1_6T = 2_000            # the seller's blog: $1,200 -> $2,000 through 2025
QUANTUM2_64X400G = 36_000      # FS archived listing


def test_every_price_has_a_source_and_a_basis():
    for part, entry in PRICED.items():
        assert entry is not None
        if entry.price is None:
            assert entry.note and len(entry.note) > 10, part        # why there is no figure
            continue
        assert (entry.basis or BOOK.basis) and (entry.source or BOOK.source), part
        assert (entry.source_class or BOOK.source_class), part
        if entry.basis in WEAK_BASES:
            assert entry.derivation, part                           # the arithmetic or the product standing in


def test_no_part_is_priced_at_zero_for_want_of_a_figure():
    zero = {part for part, entry in PRICED.items() if entry is not None and entry.price == 0}
    assert zero == {"bmc-1g"}       # on the server's motherboard: its price is the server's


@pytest.mark.parametrize("part", ["mms4a00-xm", "mms4a00-xm-flt", "mms4c11-xm", "mms4c11-xm-flt"])
def test_1_6t_modules_carry_the_sellers_figure_and_say_it_is_weak(part):
    entry = PRICED[part]
    assert entry is not None and entry.price == MODULE_1_6T
    assert (entry.basis, entry.source_class) == ("street", "reseller")
    assert entry.source and "100gmodules.com" in entry.source and "WEAK" in entry.source


@pytest.mark.parametrize("part,of", [("mms4a00-xm-flt-4x400g", "mms4a00-xm-flt"),
                                     ("mms4c11-xm-flt-4x400g", "mms4c11-xm-flt")])
def test_a_split_mode_costs_its_module(part, of):
    entry = PRICED[part]
    assert entry is not None and entry.price == PRICED[of].price == MODULE_1_6T     # type: ignore[union-attr]


@pytest.mark.parametrize("part", ["mms4a20-xm", "mms4a20-xm-2x400g", "mms4c10-xm800", "mms4c10-xm800-2x400g"])
def test_800g_single_port_modules_are_a_named_proxy(part):
    entry = PRICED[part]
    assert entry is not None and entry.price == MODULE_1_6T and entry.basis == "proxy"
    assert entry.derivation and "proxy" in entry.derivation and "1.6T" in entry.derivation


def test_the_prototype_says_so_in_its_price_and_its_catalog_entry():
    for part in ("mms4c10-xm800", "mms4c10-xm800-2x400g"):
        entry = PRICED[part]
        assert entry is not None and entry.note and "prototype" in entry.note
        assert "PROTOTYPE" in builtin_catalog().transceiver(part).source


def test_qm9700_is_the_fs_listing_as_a_proxy_not_a_cost_model_guess():
    entry = PRICED["qm9700"]
    assert entry is not None and entry.price == QUANTUM2_64X400G == PRICED["qm9790"].price  # type: ignore[union-attr]
    assert (entry.basis, entry.source_class) == ("proxy", "reseller") and entry.derivation


def test_every_catalog_module_and_cable_has_a_price_line():
    """A part the media choice can pick is in the book: priced, or null with the reason."""
    cat = builtin_catalog()
    for kind in ("transceiver", "cable"):
        missing = sorted(set(cat.entries[kind]) - set(PRICED))
        assert not missing, (kind, missing)


def test_the_colocation_rate_states_its_arithmetic():
    rate = sourced("defaults.yaml", "defaults")["colocation_usd_per_kw_month"]
    h2_2024, growth_2025, h2_2025 = 184.06, 0.065, 194.95
    assert rate.value == round(h2_2024 * (1 + growth_2025)) == 196
    assert abs(rate.value - h2_2025) < 1.1                      # CBRE's own year-end 2025 figure
    for figure in ("184.06", "1.065", "194.95"):
        assert figure in rate.source
