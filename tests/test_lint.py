"""The code stays ruff- and mypy-clean (both are test dependencies), hypothesis runs are reproducible,
and nothing is skipped in CI. The linters write no cache into the checkout: another test, running at the same
time in another worker, checks that the API examples leave no file behind there (tests/test_api_docs.py)."""

import subprocess
import sys

from tests.helpers import ROOT


def test_ruff_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "validator", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_clean(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy"), "validator"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pipeline_layers_contract():
    """import-linter's layers contract (pyproject.toml): no stage imports a stage above it."""
    proc = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                           "lint_imports_command()", "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_package_ships():
    """pyproject.toml lists the packages (schemas/ and templates/ map into the wheel): none is missing."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "validator").rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_every_hypothesis_settings_is_derandomized():
    """tests/conftest.py loads a derandomized profile; a `@settings(...)` says so too, so a test copied
    out of this suite stays reproducible."""
    import ast

    loose = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "settings" and node.keywords:
                flags = {k.arg: k.value for k in node.keywords}
                value = flags.get("derandomize")
                if not (isinstance(value, ast.Constant) and value.value is True):
                    loose.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not loose, f"@settings without derandomize=True: {loose}"


def test_a_skip_fails_when_ci_allows_none(tmp_path):
    """With CLUSTERPLAN_NO_SKIP=1 (.ci/run) the suite's conftest turns a skip into a failure."""
    import os
    import shutil

    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_skip.py").write_text("import pytest\n\ndef test_skipped():\n    pytest.skip('no tool')\n")
    env = {k: v for k, v in os.environ.items() if k != "CLUSTERPLAN_NO_SKIP"}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)]
    local = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env=env)
    ci = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, env={**env, "CLUSTERPLAN_NO_SKIP": "1"})
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout
    assert ci.returncode == 1 and "1 failed" in ci.stdout and "CLUSTERPLAN_NO_SKIP" in ci.stdout, ci.stdout


def test_external_validators_are_found_beside_the_interpreter(monkeypatch):
    """check-jsonschema and actionlint come with the test dependencies into the interpreter's own
    environment, which need not be on PATH (a virtualenv used without activating it; .ci/run's sees the
    machine's packages, so they may be in the base interpreter's scripts folder)."""
    from pathlib import Path

    from tests.helpers import interpreter_script_folders, tool

    monkeypatch.setenv("PATH", "")
    here = set(interpreter_script_folders())
    for name in ("check-jsonschema", "actionlint"):
        found = tool(name)
        assert found is not None and Path(found).parent in here, (name, found)
