"""Rule help a user can follow: every SARIF rule's help points at its own section of docs/rules.md in
this repository, no rule text cites a file outside the repository, every rule has a real fix."""

from __future__ import annotations

import re

from tests.helpers import ROOT
from validator.emit.ci import sarif
from validator.emit.docs import rules_md

DOC = "https://github.com/clusterplan/clusterplan/blob/main/docs/rules.md"


def _rules() -> list[dict]:
    return sarif([])["runs"][0]["tool"]["driver"]["rules"]


def test_every_rule_links_to_its_section_of_docs_rules():
    page = (ROOT / "docs" / "rules.md").read_text()
    headings = set(re.findall(r"^## (\S+)$", page, re.M))
    rules = _rules()
    assert len(rules) >= 40
    for r in rules:
        assert r["helpUri"] == f"{DOC}#{r['id'].lower()}"
        assert r["id"] in headings, f"docs/rules.md has no section for {r['id']}"


def test_docs_rules_is_current():
    assert (ROOT / "docs" / "rules.md").read_text() == rules_md()


def test_no_rule_cites_a_file_outside_the_repository_and_every_fix_is_real():
    page = rules_md()
    assert "shared/" not in page and "../" not in page
    for r in _rules():
        fix = r["help"]["text"].split("\nFix: ", 1)[1]
        assert "see the message" not in fix.lower(), r["id"]
        assert len(fix.split()) >= 5, f"{r['id']}: fix {fix!r} says too little"
