"""The code stays ruff- and mypy-clean (both are test dependencies)."""

import subprocess
import sys

from tests.helpers import ROOT


def test_ruff_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "validator", "tests"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_clean():
    proc = subprocess.run([sys.executable, "-m", "mypy", "validator"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pipeline_layers_contract():
    """import-linter's layers contract (pyproject.toml): no stage imports a stage above it."""
    proc = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                           "lint_imports_command()"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_package_ships():
    """pyproject.toml lists the packages (schemas/ and templates/ map into the wheel): none is missing."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "validator").rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
