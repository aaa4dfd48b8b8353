"""What a rule is: one small check function plus its metadata.

The check's docstring is the rule's documentation: a rationale paragraph, then `Source:` and `Fix:`
lines, and an `Example:` block: a merge patch (RFC 7386, in YAML, rooted at the top of a design) that
triggers the rule; tests/test_rule_cases.py applies it to the rule's case tests/rules/<ID>/pass.yaml
and checks that it does. `docs/rules.md` is generated from it.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from validator.base.errors import Path
from validator.base.facts import fact

if TYPE_CHECKING:
    from validator.check.context import Context


@fact
class Hit:
    """One violation found by a check: the evidence, and the key path of the value to change."""

    message: str
    path: Path
    severity: str | None = None   # None: the rule's (possibly overridden) severity
    hint: str = ""
    slug: str = ""                # a more specific slug than the rule's (e.g. expired-waiver)


Check = Callable[["Context"], Iterator[Hit]]


@fact
class Rule:
    id: str
    slug: str
    title: str
    severity: str
    applies_to: str           # training | inference | all
    check: Check
    waivable: bool = True
    thresholds: tuple[str, ...] = field(default=())

    @cached_property
    def doc(self) -> dict[str, str]:
        text = inspect.cleandoc(self.check.__doc__ or "")
        parts: dict[str, str] = {"rationale": "", "source": "", "fix": "", "example": ""}
        current = "rationale"
        lines: dict[str, list[str]] = {k: [] for k in parts}
        for line in text.splitlines():
            head = line.split(":", 1)[0].strip().lower()
            if head in ("source", "fix", "example") and ":" in line:
                current = head
                rest = line.split(":", 1)[1]
                if rest.strip():
                    lines[current].append(rest.strip())
                continue
            lines[current].append(line if current == "example" else line.strip())
        for k, v in lines.items():
            joined = "\n".join(v) if k == "example" else " ".join(x for x in v if x)
            parts[k] = textwrap.dedent(joined).strip("\n") if k == "example" else joined.strip()
        parts["fix"] = parts["fix"][:1].upper() + parts["fix"][1:]
        return parts

    def applies(self, kind: str) -> bool:
        return self.applies_to == "all" or (self.applies_to == "training") == (kind == "TrainingCluster")


def as_dict(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "slug": rule.slug, "title": rule.title, "severity": rule.severity,
            "applies_to": rule.applies_to, "waivable": rule.waivable, **rule.doc}
