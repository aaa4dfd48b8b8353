"""A case per failure branch: `tests/rules/<RULE_ID>/branches.yaml` holds small merge patches of the
rule's pass (or fail, boundary) case, one per message the rule can emit, each with every finding the
patched design produces (tests/rules/README.md). tests/test_rule_coverage.py holds the rule package to
full branch coverage from these cases and the pass/fail/boundary files alone."""

from __future__ import annotations

import pytest

from tests.helpers import rel
from tests.rule_cases import BranchCase, ExpectedAt, branch_cases
from validator.check.registry import rule_by_id
from validator.pipeline import analyze

CASES = branch_cases()


def run_branch_case(case: BranchCase):
    """The patched design, analysed as if it stood where its base case stands (its `catalogs:` paths
    resolve from there)."""
    return analyze(case.base, rel(case.base), case.run_config(), text=case.text())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.rule}/{c.name}")
def test_branch_case_produces_what_it_expects(case):
    analysis = run_branch_case(case)
    assert analysis.topology is not None, [f"{f.rule} {f.message}" for f in analysis.findings]
    rule = rule_by_id(case.rule)
    assert rule is not None and rule.applies(analysis.topology.resolved.design.kind)
    found = sorted(ExpectedAt(f.rule, f.severity, f.path, f.waived) for f in analysis.findings)
    assert found == list(case.expect), "the patched design produces:\n" + "\n".join(
        f"    - {e.line()}" for e in found) + "\n" + "\n".join(f"  {f.rule}: {f.message}" for f in analysis.findings)


def test_branch_cases_are_about_their_rule():
    """A branch case either produces a finding of its folder's rule or none at all (a passing branch of
    the rule, such as a lossy-safe congestion control); names are unique within a rule."""
    strays = [f"{c.rule}/{c.name}" for c in CASES if c.expect and not any(e.rule == c.rule for e in c.expect)]
    assert not strays, strays
    names = [(c.rule, c.name) for c in CASES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
