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
