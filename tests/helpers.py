"""Shared test helpers: paths, golden-file comparison, running the CLI in-process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ROOT / "designs"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"
REFERENCE = Path(__file__).resolve().parent / "reference"
UPDATE = bool(os.environ.get("UPDATE_GOLDEN"))


def rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/NAME; `UPDATE_GOLDEN=1 pytest` (or tests/regen_golden.py) rewrites it."""
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        if not UPDATE:
            raise AssertionError(f"golden file {name} was missing and has been written; re-run the tests")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{name} differs from its golden file (regenerate: python tests/regen_golden.py)"


def cli(*args: str) -> tuple[int, str, str]:
    """Run `clusterplan ARGS` in-process; returns (exit code, stdout, stderr)."""
    from validator.commands import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def cli_subprocess(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real entry point in a child process (exit codes, no traceback, start-up)."""
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("CLUSTERPLAN_DEBUG", None)
    return subprocess.run([sys.executable, "-c", "from validator.commands import main; main()", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def interpreter_script_folders() -> list[Path]:
    """Where the running interpreter's environment keeps its commands, its own before its base's."""
    return [Path(sys.executable).parent, Path(sysconfig.get_path("scripts")),
            Path(sysconfig.get_path("scripts", vars={"base": sys.base_prefix, "platbase": sys.base_prefix}))]


def tool(name: str) -> str | None:
    """An external validator the tests call (check-jsonschema, actionlint): the one installed with the
    running interpreter (its scripts folder, e.g. .venv/bin, which need not be on PATH, or, for a
    virtualenv that sees the system's packages, the base interpreter's), else on PATH."""
    folders = interpreter_script_folders()
    for folder in folders:
        for candidate in (folder / name, folder / f"{name}.exe"):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which(name)
