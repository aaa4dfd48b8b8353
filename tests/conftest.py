"""Suite-wide settings: reproducible hypothesis runs, and no silent skips in CI.

- Hypothesis runs derandomized (the same examples on every run and machine) and keeps no example
  database, so a run depends on the code alone; each `@settings(...)` also says `derandomize=True`
  (tests/test_lint.py checks that).
- With CLUSTERPLAN_NO_SKIP=1 (set by .ci/run) a skipped test fails: CI installs every external
  validator the tests call, so a skip there means a check silently did not run.
- The click command typer builds from `validator.commands.app` (or from the one-command app `main()`
  runs, `_app_for`) is built once per session, not on every invocation: typer rebuilds it from the
  command functions' signatures each time (about 30 ms for the whole app, the larger half of an
  in-process `validate`), and the suite invokes the CLI in-process about a thousand times
  (`tests.helpers.cli`, the fuzz harness through `main()`). The app is fixed at import
  (no test registers a command), and a click command is reusable: every invocation makes its own
  context, so the memo changes no result.
- No progress display (CLUSTERPLAN_NO_PROGRESS): tests compare stderr exactly.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import settings

# no progress lines on the stderr the tests compare (a loaded machine runs commands past its 2 s delay);
# tests/test_progress.py turns it on in the children it runs
os.environ["CLUSTERPLAN_NO_PROGRESS"] = "1"

# the DCIM sync against a real server runs only where one is started (.ci/run, .ci/nautobot-server)
collect_ignore = [] if os.environ.get("NAUTOBOT_URL") else ["test_dcim_live.py"]

settings.register_profile("clusterplan", derandomize=True, database=None, deadline=None)
settings.load_profile("clusterplan")


def _build_each_command_once() -> None:
    import typer.main
    import typer.testing

    build = typer.main.get_command
    built: dict[int, tuple[Any, Any]] = {}     # id(app) -> (app, its click command); the app kept alive

    def get_command(app: Any) -> Any:
        if id(app) not in built:
            built[id(app)] = (app, build(app))
        return built[id(app)][1]

    typer.main.get_command = get_command       # used by Typer.__call__, so by validator.commands.main()
    typer.testing._get_command = get_command   # used by CliRunner.invoke, so by tests.helpers.cli()


_build_each_command_once()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CLUSTERPLAN_NO_SKIP") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped, but CLUSTERPLAN_NO_SKIP=1 (CI) allows no skip: {report.longrepr}"
