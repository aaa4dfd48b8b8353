"""Every rule, listed once, in ID order. Adding a rule means adding a line here."""

from __future__ import annotations

from functools import cache

from validator.rules.base import Rule

RULES: tuple[Rule, ...] = ()


@cache
def _by_id() -> dict[str, Rule]:
    return {r.id: r for r in RULES}


def rule_by_id(rule_id: str) -> Rule | None:
    return _by_id().get(rule_id)
