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
from tests.fuzzing_repo import repo_mutant, run_repo


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
    parser.add_argument("--repo-share", type=float, default=0.3, help="share of repository mutants (file names, "
                        ".clusterplan.yaml, manifests, templates: tests/fuzzing_repo.py)")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    crashes: dict[str, Path] = {}
    failures = 0
    slowest = 0.0
    valid = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        repos = 0
        for i in range(opts.count):
            if rng.random() < opts.repo_share:
                repo = repo_mutant(rng)
                data = repr(repo).encode("utf-8")
                outcome = run_repo(repo, Path(tmp))
                repos += 1
            else:
                data = mutant(rng)
                outcome = run_one(data, Path(tmp), sizes=LONG_RUN)
            if (i + 1) % 250 == 0:
                print(f"{i + 1} mutants: {repos} repository mutants, {failures} failure(s), "
                      f"{time.perf_counter() - start:.0f} s", flush=True)
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
    print(f"{opts.count} mutants (seed {opts.seed}) in {total:.0f} s: {repos} repository mutants; {valid} loaded "
          f"fully and through every output (or every command), {failures} failure(s) at {len(crashes)} site(s), "
          f"slowest validate {slowest:.2f} s")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
