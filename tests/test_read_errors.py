"""Golden error messages for malformed designs: every error class, with file:line:col and a hint."""

from __future__ import annotations

import pytest

from tests.helpers import FIXTURES, check_golden, cli_subprocess, rel
from validator.emit.text import render_text
from validator.pipeline import analyze

MALFORMED = sorted((FIXTURES / "malformed").glob("*.yaml"))


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.stem)
def test_golden_error_output(path):
    analysis = analyze(path, rel(path))
    assert analysis.findings, "a malformed fixture must produce at least one finding"
    assert all(f.severity == "error" for f in analysis.findings)
    source = path.read_text(encoding="utf-8", errors="replace")
    text = render_text([analysis], {analysis.file: source}, failed=[analysis.file])
    check_golden(f"errors/{path.stem}.txt", text)


EXPECTED_FIRST = {
    "yaml-syntax": ("YAML001", 10), "tabs": ("YAML001", 9), "duplicate-key": ("YAML005", 11),
    "unknown-key": ("SCH001", 10), "wrong-type": ("SCH001", 9), "missing-required": ("SCH001", 8),
    "bad-enum": ("SCH001", 13), "zero-count": ("SCH001", 9), "absurd-size": ("SCH001", 9),
    "unknown-catalog": ("REF001", 8), "kind-mismatch": ("SCH004", 2), "bad-api-version": ("SCH002", 1),
    "catalog-escape": ("CAT005", 3), "empty": ("YAML002", 1), "non-utf8": ("YAML000", 4),
    "alias-bomb": ("YAML003", 7), "header-only": ("SCH001", 1),
}


def test_every_fixture_is_pinned():
    assert {p.stem for p in MALFORMED} == set(EXPECTED_FIRST)


@pytest.mark.parametrize("stem", sorted(EXPECTED_FIRST))
def test_rule_and_line_pinned(stem):
    path = FIXTURES / "malformed" / f"{stem}.yaml"
    first = analyze(path, rel(path)).findings[0]
    assert (first.rule, first.line) == EXPECTED_FIRST[stem]


def test_did_you_mean_for_unknown_key():
    path = FIXTURES / "malformed" / "unknown-key.yaml"
    findings = analyze(path, rel(path)).findings
    assert len(findings) == 1  # the typo, not also "servers_per_rack missing"
    assert findings[0].hint == "did you mean 'servers_per_rack'?"


def test_bad_input_exits_1_without_traceback():
    proc = cli_subprocess("validate", *[rel(p) for p in MALFORMED])
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"{len(MALFORMED)} designs checked: 0 passed, {len(MALFORMED)} failed" in proc.stdout
