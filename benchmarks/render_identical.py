"""Byte-identity of `render` between two checkouts: every file of the output tree, for every design given
(default: designs/*.yaml and the benchmark's 100k-GPU training and inference designs, generated into a
temporary directory by benchmarks/generate.py).

    python benchmarks/render_identical.py /work/main [DESIGN ...]

renders each design with the reference checkout's code (PYTHONPATH=REF) and with this one's, and
compares the two trees: the same relative paths, the same bytes. Prints the CPU time (user + system, of
the child processes) of each render; exits 1 at the first difference it reports."""

from __future__ import annotations

import filecmp
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
# The checkout's own code first: `python -c` puts the working directory (this checkout) ahead of PYTHONPATH on
# sys.path, so PYTHONPATH alone rendered the reference with this checkout's code.
CLI = "import sys; sys.path.insert(0, sys.argv.pop(1)); from validator.commands import main; sys.argv[0] = " \
      "'clusterplan'; main()"


def _render(code: Path, design: Path, out: Path) -> tuple[int, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(code), "CLUSTERPLAN_NO_PROGRESS": "1"}
    done = subprocess.run([sys.executable, "-c", CLI, str(code), "render", str(design), "-o", str(out), "--force"],
                          cwd=HERE, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr)
    return done.returncode, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _differences(a: Path, b: Path) -> list[str]:
    left, right = _tree(a), _tree(b)
    if left != right:
        return [f"only in reference: {sorted(set(left) - set(right))[:5]}",
                f"only in this checkout: {sorted(set(right) - set(left))[:5]}"]
    _match, mismatch, errors = filecmp.cmpfiles(a, b, left, shallow=False)
    return [f"differs: {name}" for name in mismatch + errors]


def main(argv: list[str]) -> int:
    reference = Path(argv[0]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        designs = [Path(p).resolve() for p in argv[1:]]
        if not designs:
            subprocess.run([sys.executable, str(HERE / "benchmarks" / "generate.py"), f"{tmp}/bench"], check=True,
                           capture_output=True)
            designs = [*sorted((HERE / "designs").glob("*.yaml")), Path(f"{tmp}/bench/training-102400.yaml"),
                       Path(f"{tmp}/bench/inference-102400.yaml")]
        failed = 0
        for n, design in enumerate(designs):
            a, b = Path(tmp) / f"ref{n}", Path(tmp) / f"new{n}"
            code_a, cpu_a = _render(reference, design, a)
            code_b, cpu_b = _render(HERE, design, b)
            problems = [f"exit {code_a} vs {code_b}"] if code_a != code_b else []
            problems += _differences(a, b) if a.exists() or b.exists() else []
            files = len(_tree(b)) if b.exists() else 0
            status = "identical" if not problems else "DIFFERENT: " + "; ".join(problems[:5])
            print(f"{design.name}: {files} files, CPU {cpu_a:.2f} s -> {cpu_b:.2f} s, {status}", flush=True)
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
