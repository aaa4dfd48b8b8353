"""Long fuzz run: mutated designs through the real entry point (`validate`) and every output of the ones
that can be analysed (tests/fuzzing.py). A failure is an exception, a traceback, `internal error`, an
exit code other than 0, 1 or 2, or JSON with Infinity/NaN; each distinct one is saved for replay.
Run: python benchmarks/fuzz.py --count 10000 [--seed N]"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzzing import LONG_RUN, mutant, run_one


def _site(failure: str) -> str:
    """One line naming a failure: the exception, the `internal error` line or the exit code."""
    lines = [line for line in failure.strip().splitlines() if line.strip()]
    for line in lines:
        if "internal error" in line or line.startswith("exit code"):
            return line.strip()
    return lines[-1].strip() if lines else "failure"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    crashes: dict[str, Path] = {}
    failures = 0
    slowest = 0.0
    valid = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.count):
            data = mutant(rng)
            outcome = run_one(data, Path(tmp), sizes=LONG_RUN)
            slowest = max(slowest, outcome.seconds)
            valid += outcome.valid
            if outcome.crashed:
                failures += 1
                site = _site(outcome.crashed)
                if site not in crashes:
                    keep = Path(tempfile.gettempdir()) / f"clusterplan-crash-{len(crashes) + 1}.yaml"
                    keep.write_bytes(data)
                    crashes[site] = keep
                    print(f"mutant {i}: {site} (saved as {keep})", flush=True)
    total = time.perf_counter() - start
    print(f"{opts.count} mutants (seed {opts.seed}) in {total:.0f} s: {valid} loaded fully and through every "
          f"output, {failures} failure(s) at {len(crashes)} site(s), slowest validate {slowest:.2f} s")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
