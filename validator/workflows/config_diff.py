"""What a pull request's change to `.clusterplan.yaml` does to the gate: a rule turned off, a severity
lowered, a waiver added (or widened: another key path, design glob or expiry). Each is reported in every
diff format next to the gates, and `--fail-if config-weakened` makes any of them a tripped gate
(docs/security.md): a pull request that switches off the rule it breaks cannot pass unnoticed."""

from __future__ import annotations

import tempfile
from pathlib import Path

from validator.base.errors import DesignError, ToolError
from validator.read.config import CONFIG_NAME, NO_CONFIG, RepoConfig, RepoWaiver, RunConfig, load_config

GATE = "config-weakened"
_RANK = {"off": 0, "info": 1, "warning": 2, "error": 3}


def weakened(base: RepoConfig, head: RepoConfig) -> list[str]:
    """One line per way `head` lets through what `base` did not, in rule order."""
    from validator.check.registry import rule_by_id

    out: list[str] = []
    for rule_id in sorted(set(base.severity) | set(head.severity)):
        rule = rule_by_id(rule_id)
        default = rule.severity if rule is not None else "error"
        before, after = base.severity.get(rule_id, default), head.severity.get(rule_id, default)
        if _RANK[after] < _RANK[before]:
            change = "turned off" if after == "off" else f"lowered from {before} to {after}"
            out.append(f"severity of {rule_id} {change}")
    known = {_key(w) for w in base.waivers}
    for w in head.waivers:
        if _key(w) not in known:
            where = (f" at {w.path}" if w.path else "") + (f" for designs {w.design}" if w.design else "")
            until = f" until {w.expires}" if w.expires else ""
            out.append(f"waiver added for {w.rule}{where}{until} (owner {w.owner}): {w.reason}")
    return out


def _key(w: RepoWaiver) -> tuple[str, str | None, str | None, str | None]:
    return w.rule, w.path, w.design, str(w.expires) if w.expires else None


def config_weakened(ref: str, run: RunConfig, root: Path) -> tuple[str, list[str]]:
    """(the configuration's path in the repository, how it is weaker than at `ref`)."""
    from validator.workflows.diff import git_show

    path = run.config_path.resolve() if run.config_path else root.resolve() / CONFIG_NAME
    if not path.is_relative_to(root.resolve()):
        return str(path), []
    rel = path.relative_to(root.resolve()).as_posix()
    try:
        text = git_show(ref, rel, root)
    except ToolError:
        base = NO_CONFIG            # no configuration at the base: every override and waiver is new
    else:
        with tempfile.TemporaryDirectory(prefix="clusterplan-config-") as tmp:
            (Path(tmp) / ".git").mkdir()
            copy = Path(tmp) / CONFIG_NAME
            copy.write_text(text, encoding="utf-8")
            try:
                base = load_config(copy)
            except DesignError:
                base = NO_CONFIG    # an invalid base configuration held nothing back
    return rel, weakened(base, run.repo)
