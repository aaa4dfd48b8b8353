"""Every rule has a fixture that triggers exactly that rule, pinned to its ID and YAML line; waivers,
severity overrides and thresholds behave as documented."""

from __future__ import annotations

from datetime import date

import pytest

from tests.helpers import DESIGNS, FIXTURES, ROOT, cli, rel
from validator.check.engine import run_rules
from validator.check.registry import RULES
from validator.emit.docs import rules_md
from validator.pipeline import analyze, load_topology

# rule -> (severity, line) of its fixture's findings
PINNED = {
    "FAC001": ("error", [10]), "FAC002": ("error", [6]), "FAC003": ("error", [10]),
    "INF001": ("error", [24]), "INF002": ("error", [24]), "INF003": ("error", [29]), "INF004": ("error", [32]),
    "INF005": ("info", [13]), "INF006": ("warning", [24]), "INF007": ("error", [29]),
    "NET001": ("error", [16]), "NET002": ("error", [14]), "NET003": ("warning", [12]), "NET004": ("error", [10]),
    "NET005": ("error", [16]), "NET006": ("error", [18]), "NET007": ("error", [16]), "NET008": ("error", [16]),
    "NET009": ("error", [19]),
    "TRN001": ("error", [26]), "TRN002": ("error", [17]), "TRN003": ("error", [39]), "TRN004": ("error", [40]),
    "TRN005": ("error", [41]), "TRN006": ("warning", [8]), "TRN007": ("error", [16, 16]),
    "TRN008": ("warning", [36]), "TRN009": ("warning", [18]), "TRN010": ("warning", [30]),
}


def test_every_rule_with_a_check_has_a_fixture():
    assert {r.id for r in RULES} - {"WVR001"} == set(PINNED)


@pytest.mark.parametrize("rule_id", sorted(PINNED))
def test_fixture_triggers_exactly_its_rule(rule_id):
    path = FIXTURES / "rules" / f"{rule_id}.yaml"
    findings = analyze(path, rel(path)).findings
    severity, lines = PINNED[rule_id]
    assert {f.rule for f in findings} == {rule_id}, [f"{f.rule} {f.message}" for f in findings]
    assert [f.line for f in findings] == lines
    assert {f.severity for f in findings} == {severity}


@pytest.mark.parametrize("name", ["small-training", "small-inference"])
def test_clean_bases_have_no_findings(name):
    path = FIXTURES / "valid" / f"{name}.yaml"
    assert analyze(path, rel(path)).findings == []


@pytest.mark.parametrize("path", sorted(DESIGNS.glob("*.yaml")), ids=lambda p: p.stem)
def test_example_designs_have_no_unwaived_findings(path):
    assert [f for f in analyze(path, rel(path)).findings if not f.waived] == []


def test_finding_shows_the_evidence():
    path = FIXTURES / "rules" / "TRN002.yaml"
    f = analyze(path, rel(path)).findings[0]
    assert f.message == "leaf sonic-th5-64x800: 96 x 400G down, 32 x 400G up = 3:1; a training fabric must be 1:1"
    assert f.path == "fabrics.compute.tiers.leaf"


def test_fingerprint_ignores_line_moves(tmp_path):
    src = (FIXTURES / "rules" / "FAC001.yaml").read_text()
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(src)
    b.write_text("# a comment that moves every line\n" + src)
    fa, fb = analyze(a, "d.yaml").findings[0], analyze(b, "d.yaml").findings[0]
    assert fa.line + 1 == fb.line and fa.fingerprint == fb.fingerprint


def _with(tmp_path, fixture: str, extra: str):
    path = tmp_path / "d.yaml"
    path.write_text((FIXTURES / "rules" / fixture).read_text() + extra)
    return load_topology(path, "d.yaml")


def test_waiver_with_reason_waives_and_is_counted(tmp_path):
    topo = _with(tmp_path, "FAC001.yaml", "waivers:\n  - {rule: FAC001, reason: busway upgrade in Q3, owner: dc-ops}\n")
    findings = run_rules(topo, today=date(2026, 12, 2))
    assert [(f.rule, f.waived, f.waiver_reason) for f in findings] == [("FAC001", True, "busway upgrade in Q3")]


def test_expired_waiver_is_a_finding_and_does_not_apply(tmp_path):
    topo = _with(tmp_path, "FAC001.yaml",
                 "waivers:\n  - {rule: FAC001, reason: temporary, owner: dc-ops, expires: 2026-01-01}\n")
    findings = run_rules(topo, today=date(2026, 12, 2))
    assert {(f.rule, f.slug, f.waived) for f in findings} == {("FAC001", "rack-power", False),
                                                              ("WVR001", "expired-waiver", False)}


def test_unknown_reasonless_and_non_waivable_waivers(tmp_path):
    topo = _with(tmp_path, "TRN001.yaml", "waivers:\n  - {rule: TRN001, reason: later, owner: me}\n"
                 "  - {rule: ABC123, reason: x, owner: me}\n  - {rule: FAC001, reason: '  ', owner: me}\n")
    slugs = sorted(f.slug for f in run_rules(topo, today=date(2026, 12, 2)))
    assert slugs == ["lossless-fabric", "non-waivable-rule", "unknown-waiver-rule", "waiver-without-reason"]


def test_severity_override_and_off(tmp_path):
    topo = _with(tmp_path, "FAC001.yaml", "severity: {FAC001: warning}\n")
    assert [f.severity for f in run_rules(topo)] == ["warning"]
    topo = _with(tmp_path, "FAC001.yaml", "severity: {FAC001: 'off'}\n")
    assert run_rules(topo) == []


def test_fail_on_levels():
    warn = rel(FIXTURES / "rules" / "TRN008.yaml")
    assert cli("validate", warn)[0] == 0
    assert cli("validate", "--fail-on", "warning", warn)[0] == 1
    info = rel(FIXTURES / "rules" / "INF005.yaml")
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
    assert code == 0 and "Source: shared/docs/domain.md" in out
    code, _, err = cli("explain", "TRN02")
    assert code == 2 and "did you mean" in err


def test_waiver_policy_is_a_rule_that_can_be_set_off_or_lowered(tmp_path):
    extra = "waivers:\n  - {rule: FAC001, reason: temporary, owner: dc-ops, expires: 2026-01-01}\n"
    topo = _with(tmp_path, "FAC001.yaml", extra + "severity: {WVR001: 'off'}\n")
    assert [f.rule for f in run_rules(topo, today=date(2026, 12, 2))] == ["FAC001"]
    topo = _with(tmp_path, "FAC001.yaml", extra + "severity: {WVR001: info}\n")
    assert {(f.rule, f.severity) for f in run_rules(topo, today=date(2026, 12, 2))} == {("FAC001", "error"),
                                                                                         ("WVR001", "info")}


def test_repository_waivers_and_severities_reach_every_command(tmp_path):
    """A waiver and a severity in .clusterplan.yaml apply in validate, the workbook's findings and diff alike."""
    import shutil

    (tmp_path / ".git").mkdir()
    shutil.copy(FIXTURES / "rules" / "FAC001.yaml", tmp_path / "d.yaml")
    shutil.copy(FIXTURES / "rules" / "FAC002.yaml", tmp_path / "e.yaml")
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
