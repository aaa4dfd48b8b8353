"""Suite-wide settings: reproducible hypothesis runs, and no silent skips in CI.

- Hypothesis runs derandomized (the same examples on every run and machine) and keeps no example
  database, so a run depends on the code alone; each `@settings(...)` also says `derandomize=True`
  (tests/test_lint.py checks that).
- With CLUSTERPLAN_NO_SKIP=1 (set by .ci/run) a skipped test fails: CI installs every external
  validator the tests call, so a skip there means a check silently did not run.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("clusterplan", derandomize=True, database=None, deadline=None)
settings.load_profile("clusterplan")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CLUSTERPLAN_NO_SKIP") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, but CLUSTERPLAN_NO_SKIP=1 (CI) allows no skip: {report.longrepr}"
