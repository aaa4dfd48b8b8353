"""Per-platform facts the configurations need: SONiC platform and HWSKU per catalog switch
(validator/data/sonic_platforms.yaml) and lossless buffer settings per ASIC
(validator/data/sonic_buffers.yaml), each with its source."""

from __future__ import annotations

from functools import cache

from validator.base.tables import sonic_buffers, sonic_platforms
from validator.emit.render.device import Buffers, Platform


@cache
def platform_for(switch_id: str) -> Platform:
    entry = sonic_platforms().get(switch_id)
    if entry is None:
        return Platform(None, None, f"no SONiC platform recorded for catalog switch {switch_id}")
    return Platform(entry.platform, entry.hwsku, entry.source)


@cache
def buffers_for(asic: str) -> Buffers | None:
    """The ASIC's lossless buffer settings, or None when none are recorded (the config says so)."""
    entry = sonic_buffers().get(asic)
    if entry is None:
        return None
    pools = {name: {k: v for k, v in fields.items() if v is not None} for name, fields in entry.pools.items()}
    return Buffers(asic, entry.model, pools, entry.profiles, entry.pg_lossless, entry.source)
