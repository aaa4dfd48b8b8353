"""Byte-identical check of the analysis outputs between two checkouts (issue 33's speed work).

Runs validate, estimate, bom, describe and racks with `--format json` on the example designs, the valid
fixtures and generated sites, once with each checkout's own `validator` (each in its own process, the
checkout as working directory), and reports every output that differs. Run:
python benchmarks/outputs_identical.py REFERENCE_CHECKOUT [--sites 1008,10080] [--big 1016064]
(`--big` sizes get validate and bom only.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import write_site  # noqa: E402

COMMANDS = {
    "validate": ["validate", "{design}", "--format", "json"],
    "estimate": ["estimate", "{design}", "--format", "json"],
    "bom": ["bom", "{design}", "--format", "json"],
    "describe": ["describe", "{design}", "--format", "json"],
    "racks": ["racks", "{design}", "--format", "json"],
}
BIG = ("validate", "bom")


def run(checkout: Path, args: list[str], cwd: Path) -> bytes:
    """stdout and exit code of one command with a checkout's `validator`, from the same directory for both
    (outputs name the design by its path relative to the working directory)."""
    env = {**os.environ, "CLUSTERPLAN_NO_PROGRESS": "1", "PYTHONPATH": str(checkout)}
    proc = subprocess.run([sys.executable, "-m", "validator", *args], capture_output=True, env=env, cwd=cwd)
    return proc.stdout + b"\n--exit %d--\n" % proc.returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("reference", type=Path)
    parser.add_argument("--sites", default="1008,10080,96768")
    parser.add_argument("--big", default="")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="identical-"))
    designs = sorted((ROOT / "designs").glob("*.yaml")) + sorted((ROOT / "tests/fixtures/valid").glob("*.yaml"))
    jobs = [(d, list(COMMANDS)) for d in designs]
    jobs += [(write_site(tmp, int(g)), list(COMMANDS)) for g in args.sites.split(",") if g]
    jobs += [(write_site(tmp, int(g)), list(BIG)) for g in args.big.split(",") if g]
    files = differ = 0
    for design, names in jobs:
        for name in names:
            argv = [a.format(design=design.resolve()) for a in COMMANDS[name]]
            mine, ref = run(ROOT, argv, tmp), run(args.reference.resolve(), argv, tmp)
            files += 1
            if mine != ref:
                differ += 1
                print(f"DIFFERS: {name} {design.name}", flush=True)
    print(f"{files} outputs compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
