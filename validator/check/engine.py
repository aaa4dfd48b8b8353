"""Run the registered rules over a topology; apply severity overrides and waivers."""

from __future__ import annotations

from datetime import date

from validator.base.errors import format_path
from validator.base.findings import Finding, sort_key
from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.registry import RULES, WAIVER_RULE, rule_by_id
from validator.derive import Derived
from validator.expand.topology import Topology
from validator.read.model import Waiver


def run_rules(topology: Topology, derived: Derived | None = None, *, today: date | None = None,
              severity_overrides: dict[str, str] | None = None,
              repo_waivers: list[Waiver] | None = None) -> list[Finding]:
    """Every rule that applies, then the waivers (the design's, then the repository's), then WVR001 on
    the waivers themselves. Severities: the design's `severity:` over the repository's over the rule's."""
    resolved = topology.resolved
    design = resolved.design
    ctx = Context(topology, derived or Derived(topology), dict(design.thresholds))
    overrides = {**(severity_overrides or {}), **design.severity}
    findings: list[Finding] = []
    for rule in RULES:
        if rule.id == WAIVER_RULE or not rule.applies(design.kind):
            continue
        level = overrides.get(rule.id, rule.severity)
        if level == "off":
            continue
        for hit in rule.check(ctx):
            findings.append(_finding(rule, hit, level, ctx))
    # WVR001 runs last: it waives what the other rules found and reports the waivers' own problems
    ctx.findings, ctx.repo_waivers, ctx.today = findings, list(repo_waivers or []), today or date.today()
    policy = rule_by_id(WAIVER_RULE)
    assert policy is not None
    level = overrides.get(WAIVER_RULE, policy.severity)
    hits = list(policy.check(ctx))
    findings = ctx.findings
    if level != "off":
        findings += [_finding(policy, hit, level, ctx) for hit in hits]
    return sorted(findings, key=sort_key)


def _finding(rule: Rule, hit: Hit, level: str, ctx: Context) -> Finding:
    line, col = ctx.resolved.where(hit.path)
    severity = hit.severity if hit.severity and level == rule.severity else level
    return Finding(rule.id, hit.slug or rule.slug, severity, hit.message, ctx.resolved.file, line, col,
                   format_path(hit.path), hit.hint or rule.doc["fix"], rule.title)


