"""The rule package's branch coverage is 100 % from the rule cases alone (issue 26): every message a rule
can emit, and every way it can pass, is a case in tests/rules/ (a pass, fail or boundary file, or an entry
of the rule's branches.yaml). coverage.py (a test dependency) measures one run of the cases
(tests/rule_coverage.py) in a process of its own, so nothing else the suite runs counts."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import ROOT

MEASURED = ["validator/check/rules/*", "validator/check/shared.py"]

# Lines and branches no case reaches, each with why; the list may only shrink (a gap that a case now
# reaches must be struck from it). Issue 26 asks for none, and none is left: a guard no design can reach
# was deleted with the invariant that makes it unreachable named beside the code.
KNOWN_GAPS: dict[str, set[str]] = {}


def test_rule_cases_reach_every_branch_of_every_rule(tmp_path):
    data = tmp_path / "coverage"
    env_args = ["--data-file", str(data)]
    run = subprocess.run([sys.executable, "-m", "coverage", "run", *env_args, "--branch",
                          f"--include={','.join(MEASURED)}", "-m", "tests.rule_coverage"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    report = tmp_path / "coverage.json"
    out = subprocess.run([sys.executable, "-m", "coverage", "json", *env_args, "-o", str(report)],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    files = json.loads(report.read_text())["files"]
    assert files, "coverage measured no rule module"
    gaps = {}
    for name, f in sorted(files.items()):
        missing = {str(n) for n in f["missing_lines"]} | {f"{a}->{b if b > 0 else 'exit'}"
                                                          for a, b in f["missing_branches"]}
        if missing:
            gaps[name] = missing
    new = {name: sorted(where - KNOWN_GAPS.get(name, set())) for name, where in gaps.items()}
    new = {name: where for name, where in new.items() if where}
    assert not new, "lines and branches no rule case reaches (add a case to the rule's branches.yaml):\n" + \
        "\n".join(f"  {name}: {', '.join(where)}" for name, where in new.items())
    closed = {name: sorted(where - gaps.get(name, set())) for name, where in KNOWN_GAPS.items()}
    closed = {name: where for name, where in closed.items() if where}
    assert not closed, f"cases now reach these; strike them from KNOWN_GAPS: {closed}"
