"""Long fuzz run: mutated designs through validate, estimate and BOM; prints crash sites and timing.
Run: python benchmarks/fuzz.py --count 10000 [--seed N]"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzzing import mutant, run_one


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    crashes: dict[str, Path] = {}
    slowest = 0.0
    valid = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(opts.count):
            data = mutant(rng)
            outcome = run_one(data, Path(tmp))
            slowest = max(slowest, outcome.seconds)
            valid += outcome.valid
            if outcome.crashed:
                site = outcome.crashed.strip().splitlines()[-1]
                if site not in crashes:
                    keep = Path(tempfile.gettempdir()) / f"clusterplan-crash-{len(crashes) + 1}.yaml"
                    keep.write_bytes(data)
                    crashes[site] = keep
                    print(f"mutant {i}: {site} (saved as {keep})", flush=True)
    total = time.perf_counter() - start
    print(f"{opts.count} mutants (seed {opts.seed}) in {total:.0f} s: {valid} loaded fully, "
          f"{len(crashes)} crash site(s), slowest {slowest:.2f} s")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
