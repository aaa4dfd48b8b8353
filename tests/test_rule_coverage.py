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

# Lines and branches no case reaches yet, each with why; the list may only shrink (a gap that a case
# now reaches must be struck from it). Issue 26 asks for none.
KNOWN_GAPS: dict[str, set[str]] = {
    # the media plan was reworked (cages, modules, media per cage group, issue 25); cases to follow it
    "validator/check/rules/optics_reach.py": {"32", "33", "35", "47", "48", "49", "50", "51", "52", "55",
                                              "30->32", "32->33", "32->35", "51->52", "51->55"},
    # an out-of-band network the cabling plan does not build, a server without a BMC port (a design
    # catalog server), switch management ports the OOB leaves cannot all take (the OOB sizer gives every
    # management port a leaf port; a declared leaf count is not honoured short of that)
    "validator/check/rules/oob_reach.py": {"25", "27", "32", "24->25", "26->27", "31->32"},
    # a switch over the ports its tier reserves although sizing passed: a guard behind the sizer and the link
    # generator, reachable only by a bug in them (tests/test_port_truth.py holds the invariant)
    "validator/check/rules/switch_radix.py": {"27", "26->27"},
    # an unknown-power part of no fabric that is not a rack part
    "validator/check/rules/unknown_power.py": {"54", "52->54"},
    # merged this session from parallel branches, with tests of their own but no branch case yet:
    # a single-node job with no compute fabric (NET009, TRN006: tests/test_shape_rules.py), a second
    # speed of a tier without buffer data (NET012: tests/rules/NET012)
    "validator/check/rules/backend_fabric.py": {"30", "29->30"},
    "validator/check/rules/bandwidth_per_gpu.py": {"26", "25->26"},
    "validator/check/rules/lossless_render.py": {"32", "31->32"},
}


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
