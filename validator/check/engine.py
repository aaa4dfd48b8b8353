"""Run the registered rules over a topology; apply severity overrides and waivers."""

from __future__ import annotations

from datetime import date

from validator.base.errors import format_path
from validator.base.findings import Finding, sort_key
from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.check.registry import RULES, rule_by_id
from validator.derive import Derived
from validator.expand.topology import Topology


def run_rules(topology: Topology, derived: Derived | None = None, *, today: date | None = None,
              severity_overrides: dict[str, str] | None = None) -> list[Finding]:
    resolved = topology.resolved
    design = resolved.design
    ctx = Context(topology, derived or Derived(topology), dict(design.thresholds))
    overrides = {**(severity_overrides or {}), **design.severity}
    findings: list[Finding] = []
    for rule in RULES:
        if not rule.applies(design.kind):
            continue
        level = overrides.get(rule.id, rule.severity)
        if level == "off":
            continue
        for hit in rule.check(ctx):
            findings.append(_finding(rule, hit, level, ctx))
    findings = _apply_waivers(findings, ctx, today or date.today())
    return sorted(findings, key=sort_key)


def _finding(rule: Rule, hit: Hit, level: str, ctx: Context) -> Finding:
    line, col = ctx.resolved.where(hit.path)
    severity = hit.severity if hit.severity and level == rule.severity else level
    return Finding(rule.id, rule.slug, severity, hit.message, ctx.resolved.file, line, col,
                   format_path(hit.path), hit.hint or rule.doc["fix"], rule.title)


def _apply_waivers(findings: list[Finding], ctx: Context, today: date) -> list[Finding]:
    design = ctx.design
    out = list(findings)
    file = ctx.resolved.file
    for i, waiver in enumerate(design.waivers):
        path = ("waivers", i)
        rule = rule_by_id(waiver.rule)

        def meta(rule_id: str, slug: str, sev: str, msg: str, hint: str, sub: str = "",
                 path: tuple[str | int, ...] = path) -> None:
            at = (*path, sub) if sub else path
            ln, cl = ctx.resolved.where(at)
            out.append(Finding(rule_id, slug, sev, msg, file, ln, cl, format_path(at), hint, "Waiver problem"))

        if rule is None:
            meta("WVR001", "unknown-waiver-rule", "error", f"waiver {i} names unknown rule {waiver.rule}",
                 "`clusterplan rules` lists the rule IDs", "rule")
            continue
        if not waiver.reason.strip():
            meta("WVR001", "waiver-without-reason", "error", f"waiver {i} for {waiver.rule} has no reason",
                 "say why the finding is accepted", "reason")
            continue
        if waiver.expires is not None and waiver.expires < today:
            meta("WVR001", "expired-waiver", "warning", f"waiver {i} for {waiver.rule} expired on "
                 f"{waiver.expires.isoformat()}", "renew it with a new date or fix the finding", "expires")
            continue
        if not rule.waivable:
            meta("WVR001", "non-waivable-rule", "error", f"rule {waiver.rule} cannot be waived",
                 "fix the design instead", "rule")
            continue
        used = False
        for j, f in enumerate(out):
            if f.rule == waiver.rule and not f.waived and (waiver.path is None or f.path.startswith(waiver.path)):
                out[j] = f.waive(waiver.reason)
                used = True
        if not used:
            meta("WVR001", "unused-waiver", "info", f"waiver {i} for {waiver.rule} matches no finding",
                 "remove the waiver")
    return out
