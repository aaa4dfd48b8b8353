"""Code the next engineer can read: no file over 400 lines, no function over 60 lines (an AST scan of
validator/, tests/ and benchmarks/), no function over cyclomatic complexity 15 (ruff's C901, configured
in pyproject.toml and run by tests/test_lint.py).

ALLOWED lists the offenders that other work owns, each with why; an entry that no longer offends fails
too, so whoever fixes the code removes its line here.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.helpers import ROOT

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 15
SCANNED = ("validator", "tests", "benchmarks")

# (file, function or "<file>") -> why it may exceed the limits for now
ALLOWED = {
}


def _offenders(root: Path = ROOT) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for top in SCANNED:
        for path in sorted((root / top).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            lines = len(text.splitlines())
            if lines > MAX_FILE_LINES:
                found[(name, "<file>")] = f"{lines} lines"
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        found[(name, node.name)] = f"{length} lines (line {node.lineno})"
    return found


def test_no_file_over_400_lines_and_no_function_over_60():
    new = {k: v for k, v in _offenders().items() if k not in ALLOWED}
    assert not new, "split these (or the functions in them): " + "; ".join(
        f"{file} {func}: {what}" for (file, func), what in sorted(new.items()))


def test_every_allowed_offender_still_offends():
    fixed = sorted(set(ALLOWED) - set(_offenders()))
    assert not fixed, f"now within the limits, remove from ALLOWED in tests/test_code_size.py: {fixed}"


def test_ruff_holds_functions_to_complexity_15():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"] and lint["mccabe"]["max-complexity"] == MAX_COMPLEXITY
    assert "C901" not in lint.get("ignore", []) and "C901" not in str(lint.get("per-file-ignores", {}))


def test_the_scan_sees_what_it_should(tmp_path):
    """A function counts from its def line to its last line, nested functions too; a file by its lines."""
    (tmp_path / "validator").mkdir()
    inner = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))   # inner: 61 lines
    (tmp_path / "validator" / "a.py").write_text(f"def outer():\n    def inner():\n{inner}\n    return inner\n")
    (tmp_path / "validator" / "b.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    (tmp_path / "validator" / "c.py").write_text("def ok():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1))
    assert _offenders(tmp_path) == {("validator/a.py", "outer"): "63 lines (line 1)",
                                    ("validator/a.py", "inner"): "61 lines (line 2)",
                                    ("validator/b.py", "<file>"): "401 lines"}
