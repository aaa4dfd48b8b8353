"""The data tables of validator/data/, each read once into a typed record by its own loader here.

Most tables are mappings of named, sourced figures (`name: {value: ..., source: "..."}`); `sourced()`
reads one (or one section of one) into `Sourced` records and `values()` unwraps their values, the one
place that does. Code outside this module reads a table through these loaders, never through
`load_data()` and a chain of dictionary keys.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from validator.base.facts import fact
from validator.base.resources import load_data


@fact
class Sourced:
    """One figure of a data table and where it comes from."""

    value: Any
    source: str


@fact
class Threshold:
    """A rule threshold (validator/data/thresholds.yaml); a design overrides it under `thresholds:`."""

    name: str
    value: float
    source: str


@fact
class Scheme:
    """A congestion control that makes RDMA safe without PFC (validator/data/congestion_control.yaml)."""

    id: str
    name: str
    source: str


@fact
class CageFit:
    """The cage form factors a module (or cable plug) form factor fits (validator/data/cages.yaml)."""

    plug: str
    cages: frozenset[str]
    source: str


def _section(name: str, section: str | None) -> dict[str, Any]:
    data = load_data(name)
    table = data if section is None else data[section]
    if not isinstance(table, dict):
        raise TypeError(f"validator/data/{name}: {section or 'the file'} is not a mapping")
    return table


@cache
def sourced(name: str, section: str | None = None) -> dict[str, Sourced]:
    """A table of sourced figures, `validator/data/<name>` (or its `section`), by figure name. An entry
    that is not `{value, source}` (a nested section) is left out."""
    out = {}
    for key, entry in _section(name, section).items():
        if isinstance(entry, dict) and "value" in entry:
            out[str(key)] = Sourced(entry["value"], str(entry.get("source", "")))
    return out


@cache
def values(name: str, section: str | None = None) -> dict[str, Any]:
    """The values of a table of sourced figures, by figure name."""
    return {key: entry.value for key, entry in sourced(name, section).items()}


def value(name: str, key: str, section: str | None = None) -> Any:
    """One value of a table of sourced figures."""
    return sourced(name, section)[key].value


@cache
def thresholds() -> dict[str, Threshold]:
    """Every rule threshold by name."""
    return {k: Threshold(k, float(v.value), v.source) for k, v in sourced("thresholds.yaml", "thresholds").items()}


@cache
def congestion_control() -> dict[str, Scheme]:
    """The congestion-control schemes a lossy RDMA fabric may name, by id."""
    return {str(k): Scheme(str(k), str(v["name"]), str(v["source"]))
            for k, v in _section("congestion_control.yaml", "schemes").items()}


@cache
def cage_fits() -> dict[str, CageFit]:
    """Which cages each plug form factor fits, by plug."""
    return {str(k): CageFit(str(k), frozenset(v["cages"]), str(v["source"]))
            for k, v in _section("cages.yaml", "fits").items()}


@fact
class Planning:
    """Bounds and search defaults of `clusterplan size` and `sweep` (validator/data/planning.yaml)."""

    max_sweep_points: int
    max_size_candidates: int
    training_pp: tuple[int, ...]
    inference_pp: tuple[int, ...]
    max_tp: int
    default_max_gpus: int


@cache
def planning() -> Planning:
    v = values("planning.yaml")
    return Planning(int(v["max_sweep_points"]), int(v["max_size_candidates"]),
                    tuple(int(x) for x in v["training_pp"]), tuple(int(x) for x in v["inference_pp"]),
                    int(v["max_tp"]), int(v["default_max_gpus"]))


@fact
class Reliability:
    """Interruptions and checkpoint costs of large training jobs (validator/data/reliability.yaml)."""

    interruptions_per_gpu_hour: float
    checked_effective_training_time: float
    restart_minutes: float
    checkpoint_bytes_per_parameter: float
    async_checkpoint_blocking_share: float


@cache
def reliability() -> Reliability:
    v = values("reliability.yaml")
    return Reliability(**{name: float(v[name]) for name in Reliability.__dataclass_fields__})


@fact
class SparesPolicy:
    """Spares per failure class (validator/data/spares.yaml): Poisson stock over one lead time."""

    lead_time_days: float
    confidence: float
    minimum: int
    gpu_per_year: float            # GPU failures per GPU-year
    network_per_gpu_year: float    # switch-or-cable failures per GPU-year
    links_source: str              # why links are spared by the BOM's optics and cables


@cache
def spares_policy() -> SparesPolicy:
    v, rates = values("spares.yaml"), values("spares.yaml", "rates")
    return SparesPolicy(float(v["lead_time_days"]), float(v["confidence"]), int(v["minimum"]),
                        float(rates["gpu_per_year"]), float(rates["network_per_gpu_year"]),
                        str(_section("spares.yaml", "links")["source"]))


@cache
def hours_per_year() -> float:
    """Hours in a year of operation (validator/data/serving.yaml)."""
    return float(value("serving.yaml", "hours_per_year"))


@fact
class PriceSpread:
    """How far a price of one basis may be off, as multiples of the expected figure
    (validator/data/price_ranges.yaml `spread`)."""

    basis: str
    low: float
    high: float
    source: str


@cache
def price_spreads() -> dict[str, PriceSpread]:
    """The spread of every price basis, by basis."""
    return {str(k): PriceSpread(str(k), float(v["low"]), float(v["high"]), str(v["source"]))
            for k, v in _section("price_ranges.yaml", "spread").items()}


@fact
class SonicPlatform:
    """SONiC platform and HWSKU of one catalog switch (validator/data/sonic_platforms.yaml); None when
    no SONiC platform is published for it."""

    switch: str
    platform: str | None
    hwsku: str | None
    source: str


@cache
def sonic_platforms() -> dict[str, SonicPlatform]:
    """Every recorded SONiC platform, by catalog switch id."""
    def text(x: Any) -> str | None:
        return None if x is None else str(x)

    return {str(k): SonicPlatform(str(k), text(v["platform"]), text(v["hwsku"]), str(v["source"]))
            for k, v in _section("sonic_platforms.yaml", None).items()}


_SONIC_POOLS = ("ingress_lossless_pool", "egress_lossless_pool")
_SONIC_PROFILES = ("ingress_lossy_profile", "egress_lossy_profile", "egress_lossless_profile")


@fact
class SonicBuffers:
    """Lossless buffer settings of one switch ASIC for SONiC (validator/data/sonic_buffers.yaml): the
    buffer model, the pools (a size None when unknown), the static profiles, and the lossless
    priority-group profile per port speed in Mb/s (traditional model only)."""

    asic: str
    model: str                                       # traditional | dynamic
    pools: dict[str, dict[str, int | None]]          # SONiC pool name -> fields
    profiles: dict[str, dict[str, int]]              # static profile name -> fields
    pg_lossless: dict[int, dict[str, int]]           # port speed (Mb/s) -> PG profile fields
    source: str


def _sonic_buffers(asic: str, entry: dict[str, Any]) -> SonicBuffers:
    pools = {name: {str(k): None if v is None else int(v) for k, v in entry[name].items()}
             for name in _SONIC_POOLS if name in entry}
    profiles = {name: {str(k): int(v) for k, v in entry[name].items()} for name in _SONIC_PROFILES if name in entry}
    pg = {int(speed): {str(k): int(v) for k, v in fields.items()}
          for speed, fields in entry.get("pg_lossless", {}).items()}
    return SonicBuffers(asic, str(entry["model"]), pools, profiles, pg, str(entry["source"]))


@cache
def sonic_buffers() -> dict[str, SonicBuffers]:
    """Every recorded ASIC's SONiC buffer settings, by ASIC name."""
    return {str(k): _sonic_buffers(str(k), v) for k, v in _section("sonic_buffers.yaml", None).items()}
