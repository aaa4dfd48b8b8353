"""Every rule owns its cases (tests/rules/<RULE_ID>/: pass, fail and boundary designs whose headers say
which findings they produce, tests/rule_cases.py), and every rule's docstring example triggers it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers import rel
from tests.rule_cases import (
    BRANCHES,
    CASES_DIR,
    KINDS,
    RUN_DATE,
    Expected,
    HeaderError,
    case_files,
    case_path,
    expected_findings,
    merge_patch,
)
from validator.check.registry import RULES, rule_by_id
from validator.pipeline import analyze
from validator.read.config import RunConfig

CASES = case_files()


def _run(path):
    return analyze(path, rel(path) if path.is_relative_to(CASES_DIR) else path.name, RunConfig(today=RUN_DATE))


def _found(analysis) -> list[Expected]:
    return sorted(Expected(f.rule, f.severity, f.line, f.waived) for f in analysis.findings)


@pytest.mark.parametrize("rule_id", [r.id for r in RULES])
def test_every_rule_has_its_three_cases(rule_id):
    missing = [kind for kind in KINDS if not case_path(rule_id, kind).is_file()]
    assert not missing, f"add tests/rules/{rule_id}/{{{','.join(missing)}}}.yaml (tests/rules/README.md)"


def test_every_case_folder_is_a_rule_and_every_file_a_kind():
    for folder in sorted(p for p in CASES_DIR.iterdir() if p.is_dir()):
        assert rule_by_id(folder.name) is not None, f"tests/rules/{folder.name}/ names no registered rule"
        strays = sorted(p.name for p in folder.iterdir()
                        if (p.stem not in KINDS or p.suffix != ".yaml") and not _catalog_folder(p)
                        and p.name != BRANCHES)
        assert not strays, f"tests/rules/{folder.name}/ holds {strays}; a case is one of {KINDS} (.yaml), " \
                           f"branch cases go in {BRANCHES} and design catalog files of the cases in catalog/"


def _catalog_folder(path: Path) -> bool:
    """`catalog/`: the design catalog files (`catalogs:`) the cases of a rule read, nothing else."""
    return path.is_dir() and path.name == "catalog" and all(p.suffix == ".yaml" for p in path.iterdir())


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case_produces_what_its_header_says(path):
    rule = rule_by_id(path.parent.name)
    assert rule is not None
    expected = expected_findings(path)
    analysis = _run(path)
    assert analysis.topology is not None, [f"{f.rule} {f.message}" for f in analysis.findings]
    assert rule.applies(analysis.topology.resolved.design.kind), f"{rule.id} does not run on this kind of design"
    found = _found(analysis)
    assert found == expected, "the design produces:\n" + "\n".join(
        [e.header() for e in found] or ["# expect: none"]) + "\n" + "\n".join(
        f"  {f.rule} line {f.line}: {f.message}" for f in analysis.findings)
    own = [e for e in expected if e.rule == rule.id and not e.waived]
    if path.stem == "fail":
        assert own, f"a fail case must produce a finding of {rule.id}"
    elif path.stem == "pass":
        assert not own, f"a pass case must produce no finding of {rule.id}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_docstring_example_applied_to_the_pass_case_triggers_the_rule(rule, tmp_path):
    """The `Example:` of a rule's docstring (docs/rules.md, `clusterplan explain`) is a merge patch
    (RFC 7386, in YAML) of the rule's pass case: applied to it, the rule fires."""
    base = case_path(rule.id, "pass")
    patch = yaml.safe_load(rule.doc["example"])
    assert isinstance(patch, dict), f"{rule.id}: the Example is not a YAML mapping rooted at the design's top"
    design = yaml.safe_load(base.read_text(encoding="utf-8"))
    patched = merge_patch(design, patch)
    assert patched != design, f"{rule.id}: the Example changes nothing in tests/rules/{rule.id}/pass.yaml"
    path = tmp_path / "example.yaml"
    path.write_text(yaml.safe_dump(patched, sort_keys=False), encoding="utf-8")
    analysis = _run(path)
    assert analysis.topology is not None, [f"{f.rule} {f.message}" for f in analysis.findings]
    assert rule.id in {f.rule for f in analysis.findings}, [f"{f.rule} {f.message}" for f in analysis.findings]


def test_merge_patch_follows_rfc_7386():
    """The example of RFC 7386 section 3 and every test case of its appendix A."""
    target = {"title": "Goodbye!", "author": {"givenName": "John", "familyName": "Doe"},
              "tags": ["example", "sample"], "content": "This will be unchanged"}
    patch = {"title": "Hello!", "phoneNumber": "+01-234-567-8910", "author": {"familyName": None},
             "tags": ["example"]}
    assert merge_patch(target, patch) == {"title": "Hello!", "author": {"givenName": "John"},
                                          "tags": ["example"], "content": "This will be unchanged",
                                          "phoneNumber": "+01-234-567-8910"}
    assert merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert merge_patch({"a": "b"}, {"a": None}) == {}
    assert merge_patch({"a": "b", "b": "c"}, {"a": None}) == {"b": "c"}
    assert merge_patch({"a": ["b"]}, {"a": "c"}) == {"a": "c"}
    assert merge_patch({"a": "c"}, {"a": ["b"]}) == {"a": ["b"]}
    assert merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert merge_patch(["a", "b"], ["c", "d"]) == ["c", "d"]
    assert merge_patch({"a": "b"}, ["c"]) == ["c"]
    assert merge_patch({"a": "foo"}, None) is None
    assert merge_patch({"a": "foo"}, "bar") == "bar"
    assert merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert merge_patch([1, 2], {"a": "b", "c": None}) == {"a": "b"}
    assert merge_patch({}, {"a": {"bb": {"ccc": None}}}) == {"a": {"bb": {}}}


@pytest.mark.parametrize("header, problem", [
    ("# a case with no expect line\n", "no `# expect:` line"),
    ("# expect: none\n# expect: FAC001 error 3\n", "must be the only expect line"),
    ("# expect: FAC001 fatal 3\n", "is not `<RULE_ID>"),
    ("# expect: FAC001 error\n", "is not `<RULE_ID>"),
])
def test_a_header_that_does_not_say_what_it_expects_is_an_error(tmp_path, header, problem):
    path = tmp_path / "fail.yaml"
    path.write_text(header + "apiVersion: clusterplan/v1\n")
    with pytest.raises(HeaderError, match=problem):
        expected_findings(path)


def test_header_lines_are_read_until_the_design_starts(tmp_path):
    path = tmp_path / "fail.yaml"
    path.write_text("# about the case\n# expect: FAC001 error 12\n# expect: WVR001 warning 40 waived\n"
                    "apiVersion: clusterplan/v1\n# expect: NET001 error 9\n")
    assert expected_findings(path) == [Expected("FAC001", "error", 12), Expected("WVR001", "warning", 40, True)]
