"""Speed and memory of clusterplan at 1k, 10k and 100k GPUs, and its cold start.

Prints, per design size, wall time and peak RSS of validate, estimate, bom --format json, cabling
--format csv, racks (text and JSON), bom --format xlsx and render; the ratio time(10x size) / time(size); and the cold
`clusterplan validate designs/` with an import-time breakdown. Run: python benchmarks/run.py
[--sizes 1024,10240,102400] [--markdown docs/performance.md]
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import write  # noqa: E402

COMMANDS = {
    "validate": ["validate", "{design}"],
    "estimate": ["estimate", "{design}", "--format", "json"],
    "bom json": ["bom", "{design}", "--format", "json", "-o", "{out}/bom.json"],
    "cabling csv": ["cabling", "{design}", "-o", "{out}/cabling.csv"],
    "racks text": ["racks", "{design}", "-o", "{out}/racks.txt"],
    "racks json": ["racks", "{design}", "--format", "json", "-o", "{out}/racks.json"],
    "bom xlsx": ["bom", "{design}", "--format", "xlsx", "-o", "{out}/bom.xlsx", "--timestamp", "2026-01-01"],
    "render": ["render", "{design}", "-o", "{out}/render"],
}


def measure(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one child process."""
    env = {**os.environ, "CLUSTERPLAN_NO_PROGRESS": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "validator", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def import_breakdown() -> list[tuple[str, float]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "validator", "validate", "designs/"],
                          cwd=ROOT, capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and len(m.group(3)) <= 2:   # top-level imports only
            rows.append((m.group(4), int(m.group(2)) / 1e6))
    return sorted(rows, key=lambda r: -r[1])[:10]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,10240,102400")
    parser.add_argument("--markdown", type=Path, help="also write the results as a Markdown table")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    lines: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        write(tmp)
        cold = sorted(measure(["validate", "designs/"])[0] for _ in range(5))[2]
        emit(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}")
        emit("")
        emit(f"cold `clusterplan validate designs/` (median of 5): {cold:.2f} s")
        emit("")
        emit("| top-level import | cumulative s |")
        emit("|---|---|")
        for name, secs in import_breakdown():
            emit(f"| {name} | {secs:.3f} |")
        emit("")
        times: dict[tuple[str, str, int], float] = {}
        emit("| design | GPUs | command | wall s | peak RSS MiB | exit |")
        emit("|---|---|---|---|---|---|")
        for kind in ("training", "inference"):
            for gpus in sizes:
                design = tmp / f"{kind}-{gpus}.yaml"
                out = tmp / f"out-{kind}-{gpus}"
                out.mkdir(exist_ok=True)
                for name, template in COMMANDS.items():
                    args = [a.format(design=design, out=out) for a in template]
                    wall, rss, code = measure(args)
                    times[(kind, name, gpus)] = wall
                    emit(f"| {kind} | {gpus:,} | {name} | {wall:.2f} | {rss:.0f} | {code} |")
                shutil.rmtree(out, ignore_errors=True)
        emit("")
        pairs = list(itertools.pairwise(sizes))
        emit("| design | command | " + " | ".join(f"t({b:,})/t({a:,})" for a, b in pairs) + " |")
        emit("|---|---|" + "---|" * (len(sizes) - 1))
        for kind in ("training", "inference"):
            for name in COMMANDS:
                ratios = [times[(kind, name, b)] / times[(kind, name, a)] for a, b in pairs]
                emit(f"| {kind} | {name} | " + " | ".join(f"{r:.1f}" for r in ratios) + " |")
        big = max(sizes)
        combined = sum(times[("training", c, big)] for c in ("validate", "estimate", "bom json"))
        emit("")
        emit(f"training {big:,} GPUs: validate + estimate + bom json = {combined:.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.markdown:
        opts.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
