"""Price books: a price for each part, with its basis, source, date and range, layered.

A price book is a YAML or JSON file (schemas/pricebook.schema.json):

    pricebook: 1
    name: Acme networking quote Q-1234
    currency: USD                 # another currency needs usd_per_unit, the rate the book states
    date: 2026-11-15
    source: "Acme quote Q-1234, valid to 2027-01-31"
    basis: quote                  # quote | list | street | volume | derived | proxy
    source_class: vendor          # vendor | reseller | analyst | press | cost-model | buyer
    discounts_pct: {switch: 30}
    prices:
      qm9700: 28000
      fiber-mpo12-smf: {price: 40, per_m: 2.0, note: "per length class"}
      sn5600: {price: 52000, low: 45000, high: 60000, basis: street}

Bases: `quote` (a seller's offer to you), `list` (a vendor's published list price, the ceiling),
`street` (what a buyer pays on the open market, from a shop or an analyst), `volume` (a large buyer's
price, the floor), `derived` (arithmetic on other figures, written in `derivation`) and `proxy` (another
product's price standing in, named in `derivation`). Each price has a low / expected / high range: the
entry's own `low` and `high` where its source gives a range, else the basis's spread
(validator/data/price_ranges.yaml, each with the evidence for it). Books written before bases named a
`confidence` (street-estimate, analyst-estimate, list, quote, model-assumption, derived-estimate); it is
read as the matching basis.

Where a part's price comes from, lowest precedence first: the built-in book (data/prices/), a design
catalog entry's `price_usd`, the repository's books (`prices:` in .clusterplan.yaml, later ones win),
the books given with `--prices` (later ones win), and the design's `costs.prices_usd`. A book's discount
for a category applies to prices from that book and from the layers below it; the highest such book's
discount is the one applied. A `price: null` entry prices nothing: it records why a part has no public
figure.
"""

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import field
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from validator.base.errors import DesignError, Diagnostic
from validator.base.facts import fact
from validator.base.tables import price_spreads
from validator.read.loader import load_yaml, read_text
from validator.resolve.compiled import builtin_data
from validator.resolve.trusted import construct

PRICEBOOK_VERSION = 1
PRICES_DIR = Path(__file__).resolve().parent / "catalog" / "data" / "prices"
BUILTIN_BOOKS = ("street",)

Basis = Literal["quote", "list", "street", "volume", "derived", "proxy"]
SourceClass = Literal["vendor", "reseller", "analyst", "press", "cost-model", "buyer"]
# a book written before bases: its `confidence` read as the basis (and source class) it meant
LEGACY_CONFIDENCE: dict[str, tuple[str, str | None]] = {
    "quote": ("quote", "vendor"), "list": ("list", None), "street-estimate": ("street", "reseller"),
    "analyst-estimate": ("street", "analyst"), "model-assumption": ("proxy", "cost-model"),
    "derived-estimate": ("derived", None)}
# the bases a buyer cannot take at face value: every output names the parts priced on them
WEAK_BASES = ("derived", "proxy")


def _legacy(data: Any) -> Any:
    """A book or entry that says `confidence:` instead of `basis:` (books written before bases)."""
    if isinstance(data, dict) and "confidence" in data and "basis" not in data:
        data = dict(data)
        basis, source_class = LEGACY_CONFIDENCE.get(str(data.pop("confidence")), (None, None))
        if basis is not None:
            data["basis"] = basis
            if source_class and "source_class" not in data:
                data["source_class"] = source_class
    return data
When = Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int | date) else v),
                 Field(pattern=r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$", description="YYYY, YYYY-MM or YYYY-MM-DD")]
PartId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=100)]


class PriceEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    price: Annotated[float, Field(ge=0)] | None = Field(description="Unit price in the book's currency, the "
                                                         "expected figure; null: no figure (say why in `note`)")
    low: Annotated[float, Field(ge=0)] | None = Field(None, description="Lowest price the source gives (default: "
                                                       "from the basis's spread)")
    high: Annotated[float, Field(ge=0)] | None = Field(None, description="Highest price the source gives (default: "
                                                        "from the basis's spread)")
    per_m: Annotated[float, Field(ge=0)] | None = Field(None, description="Cables: added per metre of the length "
                                                         "class bought")
    source: str | None = Field(None, min_length=3, description="Where the figure comes from, one a buyer can open "
                               "(default: the book's)")
    source_class: SourceClass | None = Field(None, description="Who publishes the source (default: the book's)")
    date: When | None = Field(None, description="When the figure was published (default: the book's date)")
    basis: Basis | None = Field(None, description="What kind of price it is (default: the book's)")
    derivation: str | None = Field(None, min_length=8, description="derived and proxy prices: the arithmetic, or "
                                   "the product standing in and why")
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _confidence(cls, data: Any) -> Any:
        return _legacy(data)

    @model_validator(mode="after")
    def _range(self) -> "PriceEntry":
        if self.price is not None and not (self.low or 0) <= self.price <= (self.high or self.price):
            raise ValueError(f"price {self.price:g} is outside its range {self.low}-{self.high}")
        return self


class PriceBook(BaseModel):
    """A price book file."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    pricebook: Literal[1] = Field(description="Format version")
    name: str = Field(min_length=1, max_length=200)
    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code of every price in the book")
    usd_per_unit: Annotated[float, Field(gt=0)] | None = Field(None, description="USD per unit of `currency`, the "
                                                              "rate the book states (required unless USD)")
    date: When
    source: str = Field(min_length=3)
    basis: Basis = Field(description="The default basis of its prices: quote, list, street, volume, derived, proxy")
    source_class: SourceClass | None = Field(None, description="Who publishes its prices (vendor, reseller, "
                                             "analyst, press, cost-model, buyer)")
    discounts_pct: dict[str, Annotated[float, Field(ge=0, le=100)]] = Field(
        default_factory=dict, description="Discount by BOM category (server, switch, transceiver, cable, ...), %")
    prices: dict[PartId, Annotated[float, Field(ge=0)] | PriceEntry] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _confidence(cls, data: Any) -> Any:
        return _legacy(data)

    @model_validator(mode="after")
    def _rate(self) -> "PriceBook":
        if self.currency != "USD" and self.usd_per_unit is None:
            raise ValueError(f"a {self.currency} book needs `usd_per_unit`, the exchange rate it uses")
        return self

    def entry(self, part: str) -> PriceEntry | None:
        raw = self.prices.get(part)
        if raw is None or isinstance(raw, PriceEntry):
            return raw
        return PriceEntry(price=raw)

    @property
    def rate(self) -> float:
        return 1.0 if self.currency == "USD" else float(self.usd_per_unit or 0.0)


@fact
class LoadedBook:
    label: str          # "built-in street" or the path as shown
    book: PriceBook


@fact
class Quote:
    """The price of one part: per unit (and per metre for cables), in USD after the discount, with its
    basis and its low / high ends (per unit, before the per-metre part, which scales with them)."""

    part: str
    base_usd: float
    per_m_usd: float
    discount_pct: float
    source: str
    date: str | None
    basis: str          # quote, list, street, volume, derived, proxy; "design" for a design's own figure
    origin: str         # the book, "catalog <file>" or "design costs.prices_usd"
    low_usd: float | None = None      # None: the basis's spread
    high_usd: float | None = None
    source_class: str | None = None
    derivation: str | None = None

    def unit_usd(self, length_m: float | None = None) -> float:
        gross = self.base_usd + (self.per_m_usd * length_m if length_m is not None else 0.0)
        return round(gross * (1 - self.discount_pct / 100), 2)

    def unit_range(self, length_m: float | None = None) -> tuple[float, float]:
        """Low and high unit price, the expected one scaled by the source's range or the basis's spread."""
        low, high = basis_spread(self.basis)
        if self.base_usd > 0:
            low = self.low_usd / self.base_usd if self.low_usd is not None else low
            high = self.high_usd / self.base_usd if self.high_usd is not None else high
        unit = self.unit_usd(length_m)
        return round(unit * low, 2), round(unit * high, 2)


@functools.cache
def _spreads() -> dict[str, tuple[float, float]]:
    return {k: (v.low, v.high) for k, v in price_spreads().items()}


def basis_spread(basis: str) -> tuple[float, float]:
    """Low and high as multiples of the expected price, for a price of this basis with no range of its own."""
    return _spreads().get(basis, _spreads()["proxy"])


@fact
class PriceTable:
    """The price layers of one run. `defaults` are the built-in books; `books` the repository's and the
    command line's, lowest precedence first."""

    defaults: tuple[LoadedBook, ...] = ()
    books: tuple[LoadedBook, ...] = ()

    def quote(self, part: str, category: str, catalog_price: float | None = None, catalog_origin: str = "catalog",
              design: Mapping[str, float] | None = None) -> Quote | None:
        if design and part in design:
            return Quote(part, float(design[part]), 0.0, 0.0, "design costs.prices_usd", None, "design",
                         "design costs.prices_usd", source_class="buyer")
        layers: list[tuple[str, LoadedBook | None]] = [("book", b) for b in self.defaults]
        layers.append(("catalog", None))
        layers += [("book", b) for b in self.books]
        for i in range(len(layers) - 1, -1, -1):
            kind, loaded = layers[i]
            quote = self._from_layer(part, kind, loaded, catalog_price, catalog_origin)
            if quote is None:
                continue
            discount = next((lb.book.discounts_pct[category] for k, lb in reversed(layers[i:])
                             if lb is not None and category in lb.book.discounts_pct), 0.0)
            return dataclasses.replace(quote, discount_pct=float(discount))
        return None

    @staticmethod
    def _from_layer(part: str, kind: str, loaded: LoadedBook | None, catalog_price: float | None,
                    catalog_origin: str) -> Quote | None:
        if kind == "catalog":
            if catalog_price is None:
                return None
            return Quote(part, float(catalog_price), 0.0, 0.0, catalog_origin, None, "design", catalog_origin,
                         source_class="buyer")
        assert loaded is not None
        book = loaded.book
        entry = book.entry(part)
        if entry is None or entry.price is None:
            return None
        rate = book.rate
        return Quote(part, entry.price * rate, (entry.per_m or 0.0) * rate, 0.0, entry.source or book.source,
                     entry.date or book.date, entry.basis or book.basis, loaded.label,
                     None if entry.low is None else entry.low * rate, None if entry.high is None else entry.high * rate,
                     entry.source_class or book.source_class, entry.derivation)

    def why_unpriced(self, part: str) -> str | None:
        """The note a book gives for a part it leaves unpriced (`price: null`), highest precedence first."""
        for loaded in (*reversed(self.books), *reversed(self.defaults)):
            entry = loaded.book.entry(part)
            if entry is not None and entry.price is None:
                return entry.note or f"{loaded.label} has no figure"
        return None


# ---------------------------------------------------------------- loading


def parse_price_book(text: str, shown: str) -> PriceBook:
    loaded = load_yaml(text, shown)
    try:
        return PriceBook.model_validate(loaded.data or {})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if isinstance(p, str | int))
            line, col = loaded.where(loc)
            where = ".".join(map(str, loc))
            problems.append(Diagnostic("PRC001", f"price book: {where + ': ' if where else ''}{err['msg']}", shown,
                                       line, col, loc, "see schemas/pricebook.schema.json"))
        raise DesignError(problems) from None


@functools.cache
def builtin_books() -> tuple[LoadedBook, ...]:
    out = []
    for name in BUILTIN_BOOKS:    # trusted: built without validation (validator/resolve/trusted.py)
        out.append(LoadedBook(f"built-in {name}", construct(PriceBook, builtin_data(f"prices/{name}.yaml"))))
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _book_at(real: str, shown: str, mtime_ns: int, size: int) -> PriceBook:
    return parse_price_book(read_text(Path(real), shown), shown)


@fact
class BookRef:
    """A price book named by a repository or on the command line, and where it was named."""

    path: Path          # as given, resolved against `base`
    shown: str
    root: Path          # the repository it must stay inside
    named_in: str = ""  # e.g. ".clusterplan.yaml prices[0]" or "--prices"


def load_books(refs: Sequence[BookRef]) -> tuple[LoadedBook, ...]:
    """Read and validate the named books; every problem at once, as a DesignError."""
    problems: list[Diagnostic] = []
    out: list[LoadedBook] = []
    for ref in refs:
        try:
            real = ref.path.resolve(strict=True)
        except (OSError, RuntimeError):
            problems.append(Diagnostic("PRC002", f"price book '{ref.shown}' not found (named in {ref.named_in})",
                                       ref.shown, hint="paths are relative to the file that names them"))
            continue
        if not real.is_relative_to(ref.root.resolve()):
            problems.append(Diagnostic("PRC003", f"price book '{ref.shown}' is outside the repository "
                                       f"(named in {ref.named_in})", ref.shown,
                                       hint="keep price books inside the design repository; symlinks out of it "
                                       "are not followed"))
            continue
        try:
            stat = real.stat()
            out.append(LoadedBook(ref.shown, _book_at(str(real), ref.shown, stat.st_mtime_ns, stat.st_size)))
        except DesignError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise DesignError(problems)
    return tuple(out)


def price_table(refs: Sequence[BookRef] = ()) -> PriceTable:
    return PriceTable(builtin_books(), load_books(refs) if refs else ())


@fact
class Costing:
    """What pricing and the TCO take from outside the design: the price layers and the repository's
    TCO settings (.clusterplan.yaml `tco:`)."""

    prices: PriceTable = field(default_factory=lambda: PriceTable(builtin_books()))
    tco: Mapping[str, float] = field(default_factory=dict)


def pricebook_schema() -> dict[str, Any]:
    schema = PriceBook.model_json_schema(ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://clusterplan.dev/schemas/pricebook.schema.json",
            "title": "clusterplan price book", **schema}
