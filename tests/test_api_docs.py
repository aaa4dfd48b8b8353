"""docs/api.md: every Python example runs, from the repository root, as a reader would paste it; every name
the examples import from `validator.api` is exported there, and `validator.api` exports nothing undocumented."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re

import pytest

from tests.helpers import ROOT

DOC = ROOT / "docs" / "api.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i + 1}" for i in range(len(EXAMPLES))])
def test_example_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__api_example__"})
    assert out.getvalue().strip(), "every example prints something a reader can compare"


def test_examples_use_only_exported_names():
    import validator.api as api

    used: set[str] = set()
    for code in EXAMPLES:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("validator"):
                assert node.module == "validator.api", f"the examples import only validator.api, not {node.module}"
                used |= {a.name for a in node.names}
    assert used <= set(api.__all__)
    assert {"analyze", "estimate", "bom", "render", "load"} <= used


def test_every_export_is_documented():
    import validator.api as api

    text = DOC.read_text(encoding="utf-8")
    assert [n for n in api.__all__ if n != "__version__" and f"`{n}" not in text] == []
    assert all(hasattr(api, n) for n in api.__all__)


def test_examples_leave_no_files_behind():
    before = set(os.listdir(ROOT))
    for code in EXAMPLES:
        with contextlib.redirect_stdout(io.StringIO()):
            cwd = os.getcwd()
            os.chdir(ROOT)
            try:
                exec(compile(code, str(DOC), "exec"), {"__name__": "__api_example__"})
            finally:
                os.chdir(cwd)
    assert set(os.listdir(ROOT)) == before
