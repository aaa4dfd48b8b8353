"""Spares per failure class, from validator/data/spares.yaml (rates with their sources, lead time and
confidence as stated design policy): the smallest stock that runs out within one lead time with a chance of
at most 1 - confidence, Poisson arrivals, never below the per-model minimum."""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.base.tables import spares_policy


@fact
class Spares:
    count: int | None          # None: spared by other lines (links: the BOM's optics and cables)
    basis: str


def poisson_stock(mean: float, confidence: float) -> int:
    """Smallest k with P(N <= k) >= confidence for N ~ Poisson(mean)."""
    if mean <= 0:
        return 0
    term = math.exp(-mean)
    total, k = term, 0
    while total < confidence and k < 100_000:
        k += 1
        term *= mean / k
        total += term
    return k


def _policy() -> tuple[float, float, int]:
    p = spares_policy()
    return p.lead_time_days, p.confidence, p.minimum


def server_spares(servers: int, gpus_per_server: int) -> Spares:
    lead, conf, _ = _policy()
    rate = spares_policy().gpu_per_year
    mean = servers * gpus_per_server * rate * lead / 365
    k = poisson_stock(mean, conf)
    return Spares(k, f"{servers:,} servers x {gpus_per_server} GPUs x {rate:g} GPU failures per GPU-year (Llama 3 "
                     f"paper) x {lead:g} days lead time = {mean:.3g} expected; stock for {conf:.0%} (Poisson)")


def switch_spares(count: int, fabric_switches: int, gpus: int) -> Spares:
    """A tier's share of the fabric's switch-or-cable failures (Llama 3 rate per GPU, an upper bound)."""
    lead, conf, minimum = _policy()
    rate = spares_policy().network_per_gpu_year
    share = count / fabric_switches if fabric_switches else 0.0
    mean = gpus * rate * lead / 365 * share
    k = max(minimum, poisson_stock(mean, conf))
    return Spares(k, f"{gpus:,} GPUs x {rate:g} switch-or-cable failures per GPU-year (Llama 3 paper, an upper "
                     f"bound) x {count}/{fabric_switches} of the fabric's switches x {lead:g} days = {mean:.3g} "
                     f"expected; stock for {conf:.0%} (Poisson), at least {minimum} per model")


def minimum_spares(what: str) -> Spares:
    _, _, minimum = _policy()
    return Spares(minimum, f"no published failure rate for {what}: the design policy minimum of {minimum} per "
                           "model (validator/data/spares.yaml)")


def link_spares() -> Spares:
    return Spares(None, spares_policy().links_source)
