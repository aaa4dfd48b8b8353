"""WVR001 waiver-policy: Waivers are valid and used."""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.errors import Path
from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.read.model import Waiver


def waiver_policy(ctx: Context) -> Iterator[Hit]:
    """Waivers are applied after every other rule has run (the design's, then those of
    `.clusterplan.yaml`): a waiver names a known rule, gives a reason, has not expired, names a
    waivable rule, and matches a finding. Like any rule, WVR001 can be set to another severity or off.

    Source: clusterplan waiver policy (an accepted risk must say why, who accepted it, and until when).
    Fix: correct the waiver's rule ID, add a reason, renew its date, or remove it.
    Example:
        waivers: [{rule: FAC001, reason: '', owner: dc-ops}]   # a waiver without a reason
    """
    from validator.check.registry import rule_by_id

    waivers: list[tuple[Waiver, Path, str]] = [(w, ("waivers", i), f"waiver {i}")
                                               for i, w in enumerate(ctx.design.waivers)]
    waivers += [(w, ("kind",), f"repository waiver {i} (.clusterplan.yaml)") for i, w in enumerate(ctx.repo_waivers)]
    out = ctx.findings
    for waiver, path, name in waivers:
        rule = rule_by_id(waiver.rule)
        if rule is None:
            yield Hit(f"{name} names unknown rule {waiver.rule}", (*path, "rule"), "error",
                      "`clusterplan rules` lists the rule IDs", "unknown-waiver-rule")
        elif not waiver.reason.strip():
            yield Hit(f"{name} for {waiver.rule} has no reason", (*path, "reason"), "error",
                      "say why the finding is accepted", "waiver-without-reason")
        elif waiver.expires is not None and ctx.today is not None and waiver.expires < ctx.today:
            yield Hit(f"{name} for {waiver.rule} expired on {waiver.expires.isoformat()}", (*path, "expires"),
                      "warning", "renew it with a new date or fix the finding", "expired-waiver")
        elif not rule.waivable:
            yield Hit(f"rule {waiver.rule} cannot be waived ({name})", (*path, "rule"), "error",
                      "fix the design instead", "non-waivable-rule")
        else:
            used = False
            for j, f in enumerate(out):
                if f.rule == waiver.rule and not f.waived and (waiver.path is None or f.path.startswith(waiver.path)):
                    out[j] = f.waive(waiver.reason)
                    used = True
            if not used:
                yield Hit(f"{name} for {waiver.rule} matches no finding", path, "info", "remove the waiver",
                          "unused-waiver")


RULE = Rule("WVR001", "waiver-policy", "Waivers are valid and used", "error", "all", waiver_policy, waivable=False)
