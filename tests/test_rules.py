"""Waivers, severity overrides, fail-on levels and the rule documentation behave as documented. (What
each rule finds, and where, is in its cases: tests/rules/, run by tests/test_rule_cases.py.)"""

from __future__ import annotations

from datetime import date

import pytest

from tests.helpers import DESIGNS, FIXTURES, ROOT, cli, rel
from tests.rule_cases import case_path
from validator.check.engine import run_rules
from validator.check.registry import RULES
from validator.emit.docs import rules_md
from validator.pipeline import analyze, load_topology


@pytest.mark.parametrize("name", ["small-training", "small-inference"])
def test_clean_bases_have_no_findings(name):
    path = FIXTURES / "valid" / f"{name}.yaml"
    assert analyze(path, rel(path)).findings == []


@pytest.mark.parametrize("path", sorted(DESIGNS.glob("*.yaml")), ids=lambda p: p.stem)
def test_example_designs_have_no_unwaived_findings(path):
    assert [f for f in analyze(path, rel(path)).findings if not f.waived] == []


def test_finding_shows_the_evidence():
    path = case_path("TRN002", "fail")
    f = analyze(path, rel(path)).findings[0]
    assert f.message == "leaf sonic-th5-64x800: 96 x 400G down, 32 x 400G up = 3:1; a training fabric must be 1:1"
    assert f.path == "fabrics.compute.tiers.leaf"


def test_fingerprint_ignores_line_moves(tmp_path):
    src = case_path("FAC001", "fail").read_text()
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(src)
    b.write_text("# a comment that moves every line\n" + src)
    fa, fb = analyze(a, "d.yaml").findings[0], analyze(b, "d.yaml").findings[0]
    assert fa.line + 1 == fb.line and fa.fingerprint == fb.fingerprint


def _with(tmp_path, rule_id: str, extra: str):
    """The fail case of a rule with more top-level keys appended."""
    path = tmp_path / "d.yaml"
    path.write_text(case_path(rule_id, "fail").read_text() + extra)
    return load_topology(path, "d.yaml")


def test_waiver_with_reason_waives_and_is_counted(tmp_path):
    topo = _with(tmp_path, "FAC001", "waivers:\n  - {rule: FAC001, reason: busway upgrade in Q3, owner: dc-ops}\n")
    findings = run_rules(topo, today=date(2026, 12, 2))
    assert [(f.rule, f.waived, f.waiver_reason) for f in findings] == [("FAC001", True, "busway upgrade in Q3")]


def test_expired_waiver_is_a_finding_and_does_not_apply(tmp_path):
    topo = _with(tmp_path, "FAC001",
                 "waivers:\n  - {rule: FAC001, reason: temporary, owner: dc-ops, expires: 2026-01-01}\n")
    findings = run_rules(topo, today=date(2026, 12, 2))
    assert {(f.rule, f.slug, f.waived) for f in findings} == {("FAC001", "rack-power", False),
                                                              ("WVR001", "expired-waiver", False)}


def test_unknown_reasonless_and_non_waivable_waivers(tmp_path):
    topo = _with(tmp_path, "TRN001", "waivers:\n  - {rule: TRN001, reason: later, owner: me}\n"
                 "  - {rule: ABC123, reason: x, owner: me}\n  - {rule: FAC001, reason: '  ', owner: me}\n")
    slugs = sorted(f.slug for f in run_rules(topo, today=date(2026, 12, 2)))
    assert slugs == ["lossless-fabric", "non-waivable-rule", "unknown-waiver-rule", "waiver-without-reason"]


def test_severity_override_and_off(tmp_path):
    topo = _with(tmp_path, "FAC001", "severity: {FAC001: warning}\n")
    assert [f.severity for f in run_rules(topo)] == ["warning"]
    topo = _with(tmp_path, "FAC001", "severity: {FAC001: 'off'}\n")
    assert run_rules(topo) == []


def test_fail_on_levels():
    warn = rel(case_path("TRN008", "fail"))
    assert cli("validate", warn)[0] == 0
    assert cli("validate", "--fail-on", "warning", warn)[0] == 1
    info = rel(case_path("INF005", "fail"))
    assert cli("validate", "--fail-on", "warning", info)[0] == 0
    assert cli("validate", "--fail-on", "info", info)[0] == 1


def test_rules_page_is_current():
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_md(), \
        "run `clusterplan docs rules -o docs/rules.md`"


def test_every_rule_is_documented_with_an_example():
    for r in RULES:
        assert r.doc["rationale"] and r.doc["source"] and r.doc["fix"] and r.doc["example"], r.id
    code, out, _ = cli("explain", "REF001")
    assert code == 0 and "reading check" in out


def test_expert_groups_must_divide_the_nvlink_domain(tmp_path):
    design = (DESIGNS / "gb200-nvl72-mixtral.yaml").read_text().replace(
        "parallelism: {tp: 1, pp: 1, dp: 576, ep: 8}", "parallelism: {tp: 4, pp: 1, dp: 144, ep: 8}")
    path = tmp_path / "d.yaml"
    path.write_text(design)
    findings = [f for f in analyze(path, "d.yaml").findings if f.rule == "TRN003"]
    assert len(findings) == 1 and "TP 4 x EP 8 = 32" in findings[0].message


def test_rules_and_explain_commands():
    from validator.base.findings import READ_CODES

    code, out, _ = cli("rules")
    assert code == 0 and len(out.splitlines()) == len(RULES) + len(READ_CODES)
    code, out, _ = cli("explain", "TRN002")
    assert code == 0 and "Source: NVIDIA DGX SuperPOD RA" in out
    code, _, err = cli("explain", "TRN02")
    assert code == 2 and "did you mean" in err


def test_waiver_policy_is_a_rule_that_can_be_set_off_or_lowered(tmp_path):
    extra = "waivers:\n  - {rule: FAC001, reason: temporary, owner: dc-ops, expires: 2026-01-01}\n"
    topo = _with(tmp_path, "FAC001", extra + "severity: {WVR001: 'off'}\n")
    assert [f.rule for f in run_rules(topo, today=date(2026, 12, 2))] == ["FAC001"]
    topo = _with(tmp_path, "FAC001", extra + "severity: {WVR001: info}\n")
    assert {(f.rule, f.severity) for f in run_rules(topo, today=date(2026, 12, 2))} == {("FAC001", "error"),
                                                                                         ("WVR001", "info")}


def test_repository_waivers_and_severities_reach_every_command(tmp_path):
    """A waiver and a severity in .clusterplan.yaml apply in validate, the workbook's findings and diff alike."""
    import shutil

    (tmp_path / ".git").mkdir()
    shutil.copy(case_path("FAC001", "fail"), tmp_path / "d.yaml")
    shutil.copy(case_path("FAC002", "fail"), tmp_path / "e.yaml")
    (tmp_path / ".clusterplan.yaml").write_text(
        "severity: {FAC002: warning}\n"
        "waivers:\n  - {rule: FAC001, design: 'd.yaml', reason: busway upgrade in Q3, owner: dc-ops}\n")
    from validator.read.config import RunConfig, load_config

    run = RunConfig(load_config(tmp_path / ".clusterplan.yaml"), tmp_path / ".clusterplan.yaml")
    d, e = analyze(tmp_path / "d.yaml", "d.yaml", run), analyze(tmp_path / "e.yaml", "e.yaml", run)
    assert [(f.rule, f.waived) for f in d.findings] == [("FAC001", True)]
    assert [(f.rule, f.severity) for f in e.findings] == [("FAC002", "warning")]
    from validator.workflows.diff import compare

    assert compare(tmp_path / "d.yaml", tmp_path / "d.yaml", "d.yaml", run).head.metrics["errors"] == 0
