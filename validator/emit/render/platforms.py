"""Per-platform facts the configurations need: SONiC platform and HWSKU per catalog switch
(validator/data/sonic_platforms.yaml) and lossless buffer settings per ASIC
(validator/data/sonic_buffers.yaml), each with its source."""

from __future__ import annotations

from functools import cache

from validator.base.resources import load_data
from validator.emit.render.device import Buffers, Platform

_POOLS = ("ingress_lossless_pool", "egress_lossless_pool")
_PROFILES = ("ingress_lossy_profile", "egress_lossy_profile", "egress_lossless_profile")


@cache
def platform_for(switch_id: str) -> Platform:
    entry = load_data("sonic_platforms.yaml").get(switch_id)
    if entry is None:
        return Platform(None, None, f"no SONiC platform recorded for catalog switch {switch_id}")
    return Platform(entry["platform"], entry["hwsku"], entry["source"])


@cache
def buffers_for(asic: str) -> Buffers | None:
    """The ASIC's lossless buffer settings, or None when none are recorded (the config says so)."""
    entry = load_data("sonic_buffers.yaml").get(asic)
    if entry is None:
        return None
    pools = {name: {k: int(v) for k, v in entry[name].items() if v is not None}
             for name in _POOLS if name in entry}
    profiles = {name: {k: int(v) for k, v in entry[name].items()} for name in _PROFILES if name in entry}
    pg = {int(speed): {k: int(v) for k, v in fields.items()} for speed, fields in entry.get("pg_lossless", {}).items()}
    return Buffers(asic, entry["model"], pools, profiles, pg, entry["source"])
