"""Speed and memory of clusterplan at 1k, 10k and 100k GPUs, and its cold start.

Prints, per design size, wall time and peak RSS of validate, estimate, bom --format json, cabling
--format csv, racks (text and JSON), bom --format xlsx and render; the ratio time(10x size) / time(size);
and the cold start: `clusterplan validate designs/` beside the import of its own third-party dependencies
alone (target: <= 0.6 s and <= 3x that import), the heavy libraries it must not load, and an import-time
breakdown. Run: python benchmarks/run.py [--sizes 1024,10240,102400] [--markdown docs/performance.md]
(`--sizes 0` measures the cold start only.)

Then the site of 1k to 1M GPUs (`benchmarks/generate.py`: GB300 NVL72 racks, two 400G planes, three tiers in
pods, management zones; at 1M the 14,112 racks of tests/fixtures/scale/site-1m-gpus.yaml): validate, estimate
and bom --format json, with CPU time beside wall time (targets of issue 33 at 1M: each <= 5 s on an idle
2-core machine, time(1M)/time(100k) <= 11, peak RSS <= 512 MiB). `--site-sizes 0` skips it.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import site_racks, write, write_site  # noqa: E402

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
    wall, _cpu, rss, code = measure_cpu(args)
    return wall, rss, code


def measure_cpu(args: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB, exit code) of one child process."""
    env = {**os.environ, "CLUSTERPLAN_NO_PROGRESS": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "validator", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


SITE_COMMANDS = ("validate", "estimate", "bom json")


def site_scaling(sizes: list[int], tmp: Path, emit: Callable[[str], None]) -> None:
    """validate, estimate and bom json of the site at every size, then time(10x)/time(x) by CPU time."""
    cpu: dict[tuple[str, int], float] = {}
    emit("| site | GPUs | command | wall s | CPU s | peak RSS MiB | exit |")
    emit("|---|---|---|---|---|---|---|")
    for gpus in sizes:
        design = write_site(tmp, gpus)
        for name in SITE_COMMANDS:
            wall, secs, rss, code = measure_cpu([a.format(design=design, out=tmp) for a in COMMANDS[name]])
            cpu[(name, gpus)] = secs
            emit(f"| site | {site_racks(gpus) * 72:,} | {name} | {wall:.2f} | {secs:.2f} | {rss:.0f} | {code} |")
    emit("")
    pairs = list(itertools.pairwise(sizes))
    emit("| site, CPU time | " + " | ".join(f"t({site_racks(b) * 72:,})/t({site_racks(a) * 72:,})"
                                            for a, b in pairs) + " |")
    emit("|---|" + "---|" * len(pairs))
    for name in SITE_COMMANDS:
        emit(f"| {name} | " + " | ".join(f"{cpu[(name, b)] / cpu[(name, a)]:.1f}" for a, b in pairs) + " |")


HEAVY = ("openpyxl", "jinja2", "networkx", "jsonschema")
_MODULES = """import sys
from validator.commands import main
sys.argv = ["clusterplan", "validate", "designs/"]
try:
    main()
except SystemExit:
    pass
names = {name for name, mod in list(sys.modules.items())
         if "site-packages" in (getattr(mod, "__file__", None) or "") and not name.startswith("_")}
print(" ".join(sorted(names)), file=sys.stderr)
"""


def startup_modules() -> list[str]:
    """Every third-party module loaded by the time `clusterplan validate designs/` exits (submodules a
    package loads lazily included: they are part of what validate costs)."""
    proc = subprocess.run([sys.executable, "-c", _MODULES], cwd=ROOT, capture_output=True, text=True)
    return proc.stderr.split()


def median_run(argv: list[str], runs: int = 11) -> tuple[float, float]:
    """(wall s, CPU s) of a child process, medians of `runs`: CPU time (user + system) is what the run
    costs on an idle machine; wall time is what a busy machine makes of it. (On a shared virtual machine
    single runs of the same command vary by +-20 %; the median of 11 moves by a few per cent.)"""
    walls, cpus = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return sorted(walls)[runs // 2], sorted(cpus)[runs // 2]


def compile_bytecode() -> None:
    """Compile clusterplan's modules as `pip install` does, so a cold run reads bytecode as an installed
    clusterplan (or a pre-commit hook's environment) does. A checkout run with PYTHONDONTWRITEBYTECODE
    set would otherwise compile ~125 modules from source on every start (about +0.1 s)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "validator")], check=True)


def cold_start(emit: Callable[[str], None]) -> None:
    """Cold validate against the import of its own dependencies; the targets of issue 19."""
    compile_bytecode()
    deps = startup_modules()
    validate = median_run([sys.executable, "-m", "validator", "validate", "designs/"])
    imports = median_run([sys.executable, "-c", "import " + ", ".join(deps)])
    bare = median_run([sys.executable, "-c", "pass"])
    tops = sorted({name.split(".")[0] for name in deps})
    heavy = sorted(set(HEAVY) & set(tops))
    emit("| cold start (median of 11, bytecode compiled) | wall s | CPU s |")
    emit("|---|---|---|")
    emit(f"| `clusterplan validate designs/` (target <= 0.6 s) | {validate[0]:.2f} | {validate[1]:.2f} |")
    emit(f"| import of its third-party dependencies alone | {imports[0]:.2f} | {imports[1]:.2f} |")
    emit(f"| bare interpreter (`python -c pass`) | {bare[0]:.2f} | {bare[1]:.2f} |")
    emit(f"| validate / dependency import (target <= 3x) | {validate[0] / imports[0]:.1f}x | "
         f"{validate[1] / imports[1]:.1f}x |")
    emit("")
    emit(f"dependencies: {len(deps)} modules of {', '.join(tops)}; heavy libraries loaded by validate: "
         f"{', '.join(heavy) or 'none'} (of {', '.join(HEAVY)})")


def import_breakdown() -> list[tuple[str, float]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "validator", "validate", "designs/"],
                          cwd=ROOT, capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and len(m.group(3)) <= 2:   # top-level imports only
            rows.append((m.group(4), int(m.group(2)) / 1e6))
    return sorted(rows, key=lambda r: -r[1])[:10]


def scaling(sizes: list[int], tmp: Path, emit: Callable[[str], None]) -> None:
    """Every command at every size: wall time, peak RSS and exit code, then the growth ratios."""
    write(tmp)
    times: dict[tuple[str, str, int], float] = {}
    emit("| design | GPUs | command | wall s | peak RSS MiB | exit |")
    emit("|---|---|---|---|---|---|")
    for kind in ("training", "inference"):
        for gpus in sizes:
            design = tmp / f"{kind}-{gpus}.yaml"
            out = tmp / f"out-{kind}-{gpus}"
            out.mkdir(exist_ok=True)
            for name, template in COMMANDS.items():
                wall, rss, code = measure([a.format(design=design, out=out) for a in template])
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,10240,102400")
    parser.add_argument("--site-sizes", default="1024,10240,102400,1016064")
    parser.add_argument("--no-cold-start", action="store_true", help="skip the cold start and import breakdown")
    parser.add_argument("--markdown", type=Path, help="also write the results as a Markdown table")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",") if int(s) > 0]
    site_sizes = [int(s) for s in opts.site_sizes.split(",") if int(s) > 0]
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-bench-"))
    lines: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    try:
        emit(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
             f"{platform.system()} {platform.release()}")
        emit("")
        if not opts.no_cold_start:
            cold_start(emit)
            emit("")
            emit("| top-level import | cumulative s |")
            emit("|---|---|")
            for name, secs in import_breakdown():
                emit(f"| {name} | {secs:.3f} |")
            emit("")
        if sizes:
            scaling(sizes, tmp, emit)
            emit("")
        if site_sizes:
            site_scaling(site_sizes, tmp, emit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.markdown:
        opts.markdown.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
