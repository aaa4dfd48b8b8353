"""Run every rule case (tests/rules/: the pass, fail and boundary files and the branch cases) once, and
nothing else: `python -m coverage run --branch -m tests.rule_coverage` measures what the rule cases
alone reach of the rule package (tests/test_rule_coverage.py holds it at 100 %)."""

from __future__ import annotations

from tests.helpers import rel
from tests.rule_cases import RUN_DATE, branch_cases, case_files
from validator.pipeline import analyze
from validator.read.config import RunConfig


def main() -> None:
    run = RunConfig(today=RUN_DATE)
    for path in case_files():
        analyze(path, rel(path), run)
    for case in branch_cases():
        analyze(case.base, rel(case.base), case.run_config(), text=case.text())


if __name__ == "__main__":
    main()
