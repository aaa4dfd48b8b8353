"""Input limits that keep a hostile or broken file from hanging or exhausting the tool."""

from __future__ import annotations

from functools import cache

from validator.base.facts import fact
from validator.base.tables import values


@fact
class Limits:
    max_file_bytes: int
    max_yaml_nodes: int
    max_files: int
    max_count: int
    max_yaml_bytes: int
    max_yaml_depth: int
    max_alias_depth: int
    template_seconds: int
    template_output_chars: int


@cache
def limits() -> Limits:
    return Limits(**{k: int(v) for k, v in values("limits.yaml", "limits").items()})
