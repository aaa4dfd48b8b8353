"""Time `clusterplan sweep` on a 100-point grid: wall time on 1 and on 2 worker processes, CPU seconds per point.

The grid is the 2,048-GPU RoCE training example (designs/roce-h100-2tier.yaml) over 10 server counts x 5
data-parallel degrees x 2 link speeds; every point is validated, estimated and costed (points whose
parallelism outgrows the cluster carry TRN005 and are analysed all the same). Each run is its own process,
start-up included. A benchmark, not a test: the figures go in docs/performance.md.

Run: python benchmarks/sweep.py [--jobs 1,2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = "designs/roce-h100-2tier.yaml"
GRID = ["--set", "compute.count=32,64,96,128,160,192,224,256,288,320",
        "--set", "training.parallelism.dp=4,8,16,32,64",
        "--set", "fabrics.compute.speed_gbps=400,800"]
POINTS = 10 * 5 * 2


def run(jobs: int, out: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of the command and its workers, exit code) of one sweep."""
    env = {**os.environ, "CLUSTERPLAN_NO_PROGRESS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "validator", "sweep", DESIGN, *GRID, "--jobs", str(jobs),
                           "--format", "csv", "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", default="1,2", help="worker counts to time, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs per worker count (the median is shown)")
    opts = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print(f"grid: {DESIGN}, {POINTS} points ({' '.join(GRID[1::2])})\n")
    print("| jobs | wall s (median) | CPU s | CPU s per point | exit |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in (int(j) for j in opts.jobs.split(",")):
            runs = sorted(run(jobs, Path(tmp) / f"sweep-{jobs}.csv") for _ in range(opts.repeat))
            wall, cpu, code = runs[len(runs) // 2]
            print(f"| {jobs} | {wall:.1f} | {cpu:.1f} | {cpu / POINTS:.3f} | {code} |", flush=True)
            rows = (Path(tmp) / f"sweep-{jobs}.csv").read_text(encoding="utf-8").count("\n") - 1
            assert rows == POINTS, f"{rows} rows for {POINTS} points"
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
