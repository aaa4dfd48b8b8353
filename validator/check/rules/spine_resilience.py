"""TRN009 spine-resilience: Enough spines to survive one failure."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def spine_resilience(ctx: Context) -> Iterator[Hit]:
    """Enough spines that losing one keeps the fabric usable: reference designs use at least 4.

    Source: DGX SuperPOD RA-11333-001 Table 4 (4 spines at 1 SU, 16 at 4 SU).
    Fix: spread the leaf uplinks over at least 4 spines.
    Example:
        fabrics: {compute: {tiers: {spine: {switch: sonic-th5-64x800, count: 2}}}}
    """
    fab = ctx.topology.fabrics.get("compute")
    spine = fab.tier("spine") if fab else None
    if spine is not None and spine.count < ctx.threshold("min_spines"):
        yield Hit(f"{spine.count} spine switch(es): one failure removes {100 / spine.count:.0f}% of the "
                  f"bisection; use at least {ctx.threshold('min_spines'):g}", ("fabrics", "compute", "tiers", "spine"))


RULE = Rule("TRN009", "spine-resilience", "Enough spines to survive one failure", "warning", "training",
            spine_resilience, thresholds=("min_spines",))
