"""Mutated designs for the fuzz test (tests/test_fuzz.py) and the long run (benchmarks/fuzz.py).

A mutation starts from an example design and changes it the way hand edits, bad merges and other
tools do: delete or rename a key, put a wrong type or an absurd number in a value, duplicate a line,
truncate the file, flip bytes, or wrap everything in YAML anchors.
"""

from __future__ import annotations

import copy
import random
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((ROOT / "designs").glob("*.yaml")) + sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.yaml"))
ODD_VALUES: list[Any] = [0, -1, 1, 2**63, 1e30, -1e30, 0.5, "", "x" * 300, "lots", True, None, [], {}, [1, 2],
                         {"a": 1}, "rocee", "dgx-h10", "1:1", "2026-13-45", float("inf")]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    node = data
    for part in path[:-1]:
        node = node[part]
    return node, path[-1]


def mutate_tree(data: Any, rng: random.Random) -> Any:
    paths = [p for p in _paths(data) if p]
    if not paths:
        return data
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        parent, key = _parent(data, rng.choice(paths))
        op = rng.random()
        if op < 0.25 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.35 and isinstance(parent, dict):
            parent[f"{key}x" if rng.random() < 0.5 else str(key)[:-1] or "k"] = parent.pop(key)
        elif op < 0.45 and isinstance(parent[key], int | float) and not isinstance(parent[key], bool):
            parent[key] = parent[key] * rng.choice([0, -1, 2, 7, 1000, 10**9])
        else:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))   # never share (and grow) one value
    return data


def mutate_text(text: str, rng: random.Random) -> bytes:
    op = rng.random()
    raw = text.encode("utf-8")
    if op < 0.25:
        return raw[: rng.randint(0, len(raw))]
    if op < 0.45:
        lines = text.splitlines(keepends=True)
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "".join(lines).encode("utf-8")
    if op < 0.6:
        out = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if op < 0.7:
        return text.replace("  ", "\t", rng.randint(1, 3)).encode("utf-8")
    if op < 0.8:
        return ("a: &a [" + ", ".join(["x"] * 9) + "]\n" + "".join(
            f"a{i}: &a{i} [" + ", ".join([f"*a{'' if i == 0 else i - 1}"] * 9) + "]\n" for i in range(8)) +
            text).encode("utf-8")
    return b"!!python/object/apply:os.system [\"echo pwned\"]\n" + raw


def mutant(rng: random.Random) -> bytes:
    seed = rng.choice(SEEDS).read_text(encoding="utf-8")
    if rng.random() < 0.6:
        data = yaml.safe_load(seed)
        data = mutate_tree(data, rng)
        try:
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        except (yaml.YAMLError, ValueError):
            text = seed
        return ("# yaml-language-server: $schema=x\n" + text).encode("utf-8") if rng.random() < 0.1 else \
            text.encode("utf-8")
    return mutate_text(seed, rng)


@dataclass
class Outcome:
    crashed: str | None       # the traceback, if analysis raised
    seconds: float
    findings: int
    valid: bool


def run_one(data: bytes, workdir: Path, name: str = "mutant.yaml") -> Outcome:
    from validator.pipeline import analyze

    path = workdir / name
    path.write_bytes(data)
    start = time.perf_counter()
    try:
        analysis = analyze(path, name)
        if analysis.topology is not None:   # a valid mutant also goes through estimate, BOM and rack elevations
            from validator.derive.bom import build_bom
            from validator.derive.elevation import elevations
            from validator.derive.estimate import estimate

            estimate(analysis.topology)
            build_bom(analysis.topology)
            elevations(analysis.facts)
    except Exception:
        return Outcome(traceback.format_exc(), time.perf_counter() - start, 0, False)
    return Outcome(None, time.perf_counter() - start, len(analysis.findings), analysis.topology is not None)
