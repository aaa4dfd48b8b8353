"""Golden outputs for every validate format; SARIF checked against the official 2.1.0 schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from tests.helpers import FIXTURES, REFERENCE, ROOT, check_golden, cli, rel
from tests.rule_cases import case_path, expected_findings
from validator.emit import ci
from validator.emit.report import report_json
from validator.pipeline import analyze

CASES = [case_path("TRN007", "fail"), case_path("INF005", "fail"),
         FIXTURES / "malformed" / "unknown-key.yaml", FIXTURES / "valid" / "small-training.yaml"]


@pytest.fixture(scope="module")
def analyses():
    return [analyze(p, rel(p)) for p in CASES]


def test_sarif_golden_and_valid(analyses):
    log = ci.sarif(analyses, ROOT)
    schema = json.loads((REFERENCE / "schemas" / "sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "clusterplan" and driver["rules"]
    for result in log["runs"][0]["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["partialFingerprints"]
        assert not result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("/")
    check_golden("outputs/report.sarif", json.dumps(log, indent=2, sort_keys=True) + "\n")


def test_sarif_has_results_array_when_clean():
    path = FIXTURES / "valid" / "small-training.yaml"
    log = ci.sarif([analyze(path, rel(path))], ROOT)
    assert log["runs"][0]["results"] == []


def test_junit_golden_and_parses(analyses):
    xml = ci.junit(analyses, "error")
    root = ET.fromstring(xml)
    suites = root.findall("testsuite")
    assert len(suites) == len(CASES)
    failures = [c for s in suites for c in s.findall("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failures} == {"TRN007 rail-alignment", "SCH001 schema"}
    check_golden("outputs/report.junit.xml", xml)


def test_github_commands_golden(analyses):
    text = ci.github(analyses, ROOT)
    line = expected_findings(CASES[0])[0].line   # the NIC 6 of `nic_to_rail: [0, 1, 2, 3, 4, 5, 7, 6]`, column 37
    assert text.startswith(f"::error file=tests/rules/TRN007/fail.yaml,line={line},col=37,"
                           "title=TRN007 rail-alignment::")
    assert "::notice file=" in text
    check_golden("outputs/report.github.txt", text)


def test_github_escaping():
    assert ci._gh_data("50%\nnext\r") == "50%25%0Anext%0D"
    assert ci._gh_prop("a:b,c") == "a%3Ab%2Cc"


def test_json_report_golden_and_schema(analyses):
    data = report_json(analyses, "error")
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    check_golden("outputs/report.json", json.dumps(data, indent=2, sort_keys=True) + "\n")


def test_machine_format_alone_on_stdout_and_several_outputs(tmp_path):
    sarif_file, junit_file = tmp_path / "r.sarif", tmp_path / "r.xml"
    code, out, _ = cli("validate", rel(CASES[0]), "--format", "github", "--output", f"sarif={sarif_file}",
                         "--output", f"junit={junit_file}")
    assert code == 1
    assert all(line.startswith("::") for line in out.splitlines())
    assert json.loads(sarif_file.read_text())["version"] == "2.1.0"
    assert ET.fromstring(junit_file.read_text()).tag == "testsuites"


def test_bad_output_spec_is_usage_error():
    code, _, err = cli("validate", rel(CASES[0]), "--output", "pdf=x.pdf")
    assert code == 2 and "FORMAT=FILE" in err


def test_text_golden(analyses):
    from validator.emit.text import render_text

    sources = {rel(p): p.read_text(encoding="utf-8") for p in CASES}
    failed = [a.file for a in analyses if any(f.severity == "error" for f in a.findings)]
    check_golden("outputs/report.txt", render_text(analyses, sources, failed=failed))
