"""Stage 7: performance and memory estimates from the topology (used by rules, `estimate` and BOM)."""

from __future__ import annotations

from typing import Any


def estimate(topology: Any) -> dict[str, Any]:
    """Placeholder until the estimator lands: memory and KV figures are in their own modules."""
    return {}
