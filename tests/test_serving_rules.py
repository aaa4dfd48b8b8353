"""The serving rules written in the per-rule case format: tests/rules/<ID>/{pass,fail,boundary}.yaml,
each opening with `# expect: <RULE_ID> <severity> <line>` lines or `# expect: none`."""

from __future__ import annotations

import pytest

from tests.helpers import ROOT, rel
from validator.pipeline import analyze

SERVING_RULES = ("INF008",)
CASES = sorted(p for rule in SERVING_RULES for p in (ROOT / "tests" / "rules" / rule).glob("*.yaml")
               if p.name != "branches.yaml")      # branch cases: tests/test_rule_branches.py


def expected(path) -> list[tuple[str, str, int]]:
    out = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        words = line[1:].split()
        if words[:1] == ["expect:"] and words[1:] != ["none"]:
            out.append((words[1], words[2], int(words[3])))
    return out


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case_gives_exactly_its_expected_findings(path):
    findings = analyze(path, rel(path)).findings
    assert sorted((f.rule, f.severity, f.line) for f in findings) == sorted(expected(path)), \
        [f"{f.rule} {f.line} {f.message}" for f in findings]


def test_every_serving_rule_has_its_three_cases():
    for rule in SERVING_RULES:
        assert {p.stem for p in (ROOT / "tests" / "rules" / rule).glob("*.yaml")} - {"branches"} == \
            {"pass", "fail", "boundary"}
