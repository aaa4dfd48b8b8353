"""Mutated designs for the fuzz test (tests/test_fuzz.py) and the long run (benchmarks/fuzz.py).

A mutation starts from an example design and changes it the way hand edits, bad merges, other tools
and attackers do: delete or rename a key, put a wrong type or an absurd number in a value, duplicate a
line, truncate the file, flip bytes; and, knowing the grammar, put names of every character class where
names go (and as mapping keys), YAML anchors, aliases, merge keys and recursive aliases, huge and
non-finite numbers, and deep nesting.

`run_one` runs a mutant through the real entry point (`validate`, in-process) and every output an
analysed design has; a failure is an exception anywhere, a traceback or `internal error` in the
output, an exit code other than 0, 1 or 2, or JSON that a strict parser refuses (Infinity, NaN).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SEEDS = sorted((ROOT / "designs").glob("*.yaml")) + sorted((ROOT / "tests" / "fixtures" / "valid").glob("*.yaml"))
ODD_VALUES: list[Any] = [0, -1, 1, 2**63, 1e30, -1e30, 0.5, "", "x" * 300, "lots", True, None, [], {}, [1, 2],
                         {"a": 1}, "rocee", "dgx-h10", "1:1", "2026-13-45", float("inf")]
# One name of each character class a name can be attacked with (tests/fixtures/hostile/names.yaml has
# the same classes with their expected errors).
NAMES: list[str] = ["a/b", "..\\x", "a b", "a\nhostname x", "a\rb", "a\tb", "\x1b]0;t\x07", "a\x00b", "=1+1",
                    "+1", "-rf", "@SUM(1)", ".hidden", "..", "_x", "a:b", "a;b", "a|b", "a#b", 'a"b', "a'b",
                    "$(id)", "`id`", "{{ 7*7 }}", "a%0Ab", "café", "a\u202eb", "a\u00a0b", "", "x" * 63, "x" * 64,
                    "server", "leaf", "spine", "core", "storage", "rack-system", "ufm", "A-b_c.d", "9", "0x1F",
                    "NET001", "min_spines", "26", "64", "dgx-h100"]
NUMBERS: list[Any] = [1e308, -1e308, 1.7976931348623157e308, float("nan"), float("-inf"), 2**63, 2**64, -(2**63),
                      10**30, 10**400, -0.0, 5e-324, 0.1, 7.0, 10_000_001]
KEYED = (("thresholds",), ("severity",), ("costs", "prices_usd"), ("costs", "spares_pct"),
         ("fabrics", "compute", "lossless", "switch", "dscp_to_tc"))
NAMED = (("metadata", "name"), ("compute", "server"), ("training", "model"), ("inference", "model"))


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


def _nested(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def _grammar(data: Any, parent: Any, key: Any, rng: random.Random) -> None:
    """A mutation that knows where names, keys and numbers go."""
    op = rng.random()
    if op < 0.3:
        parent[key] = rng.choice(NAMES)
    elif op < 0.5:
        parent[key] = rng.choice(NUMBERS)
    elif op < 0.6:
        parent[key] = _nested(rng.choice([3, 20, 60, 70, 150]))
    elif op < 0.75 and isinstance(parent, dict):
        parent[rng.choice(NAMES)] = parent.pop(key)          # a hostile or near-miss key
    elif op < 0.85 and isinstance(data, dict):                # a hostile key in a mapping keyed by names
        node: Any = data
        for part in rng.choice(KEYED):
            node = node.setdefault(part, {}) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[rng.choice(NAMES)] = rng.choice([*NUMBERS, "off", "warning", 3])
    else:
        where = rng.choice(NAMED)
        node = data
        for part in where[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[where[-1]] = rng.choice(NAMES)
        fabrics = data.get("fabrics") if isinstance(data, dict) else None
        if isinstance(fabrics, dict) and isinstance(fabrics.get("compute"), dict):
            fabrics["compute"]["extra_endpoints"] = [{"name": rng.choice(NAMES), "count": 1, "ports": 1}]


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
        if op < 0.2 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.28 and isinstance(parent, dict):
            parent[f"{key}x" if rng.random() < 0.5 else str(key)[:-1] or "k"] = parent.pop(key)
        elif op < 0.36 and isinstance(parent[key], int | float) and not isinstance(parent[key], bool):
            parent[key] = parent[key] * rng.choice([0, -1, 2, 7, 1000, 10**9])
        elif op < 0.45:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))   # never share (and grow) one value
        else:
            _grammar(data, parent, key, rng)
    return data


def _yaml_attack(text: str, rng: random.Random) -> str:
    """Anchors, aliases and merge keys, recursive ones, alias and string bombs, deep nesting, numbers
    YAML reads as infinite: written as text, because a YAML dumper never writes them."""
    lines = text.splitlines(keepends=True)
    top = [i for i, line in enumerate(lines) if line[:1].isalpha() and line.rstrip().endswith(":")]
    op = rng.random()
    if op < 0.2 and len(top) >= 2:                           # anchor a section, merge it into another
        a, b = rng.sample(top, 2)
        lines[a] = lines[a].rstrip("\n") + " &sec\n"
        lines.insert(b + 1, "  <<: *sec\n")
        return "".join(lines)
    if op < 0.35 and top:                                    # the section merged into itself, or aliased inside
        a = rng.choice(top)
        lines[a] = lines[a].rstrip("\n") + " &self\n"
        lines.insert(a + 1, rng.choice(["  <<: *self\n", "  loop: [*self]\n", "  <<: [*self, *self]\n"]))
        return "".join(lines)
    if op < 0.5:                                             # aliases of aliases, of growing depth
        depth, width = rng.randint(2, 14), rng.randint(1, 12)
        chain = "b0: &b0 [" + ", ".join(['"' + "s" * rng.choice([1, 100, 100_000]) + '"'] * width) + "]\n"
        chain += "".join(f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * width) + "]\n" for i in range(1, depth))
        return text + chain
    if op < 0.65:                                            # deep nesting, flow or block
        depth = rng.choice([10, 63, 64, 65, 200, 999, 1001, 5000])
        if rng.random() < 0.5:
            return text + "deep: " + "[" * depth + "]" * depth + "\n"
        return text + "".join(" " * i + "d:\n" for i in range(min(depth, 1200))) + " " * min(depth, 1200) + "x: 1\n"
    if op < 0.85:                                            # numbers that are not finite, as YAML reads them
        spelling = rng.choice([".inf", "-.Inf", ".NaN", "1e999", "-1e999", "1" + "0" * 400, "1" + "0" * 5000,
                               "0x" + "f" * 300, "1_000", "1e308", "+.inf", "1:30.5"])
        candidates = [i for i, line in enumerate(lines) if line.rstrip()[-1:].isdigit()]
        if candidates:
            i = rng.choice(candidates)
            head, _, _ = lines[i].rstrip("\n").rpartition(" ")
            lines[i] = f"{head} {spelling}\n"
        return "".join(lines)
    key = rng.choice(["!!python/object/apply:os.system [\"true\"]", "!!binary aGk=", "!!set {a, b}",
                      "!!omap [a: 1]", "!custom x", "&a x", "*nope"])
    return text + f"extra: {key}\n"


def mutate_text(text: str, rng: random.Random) -> bytes:
    op = rng.random()
    raw = text.encode("utf-8")
    if op < 0.15:
        return raw[: rng.randint(0, len(raw))]
    if op < 0.27:
        lines = text.splitlines(keepends=True)
        i = rng.randrange(len(lines))
        lines.insert(i, lines[rng.randrange(len(lines))])
        return "".join(lines).encode("utf-8")
    if op < 0.37:
        out = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if op < 0.42:
        return text.replace("  ", "\t", rng.randint(1, 3)).encode("utf-8")
    if op < 0.47:
        return ("a: &a [" + ", ".join(["x"] * 9) + "]\n" + "".join(
            f"a{i}: &a{i} [" + ", ".join([f"*a{'' if i == 0 else i - 1}"] * 9) + "]\n" for i in range(8)) +
            text).encode("utf-8")
    if op < 0.5:
        return b"!!python/object/apply:os.system [\"echo pwned\"]\n" + raw
    return _yaml_attack(text, rng).encode("utf-8")


def _mild(data: Any, rng: random.Random) -> Any:
    """One change a valid design survives more often than not (an accepted name, a scaled count), so
    that a share of mutants reaches every output."""
    if not isinstance(data, dict):
        return data
    op = rng.random()
    if op < 0.4 and isinstance(data.get("metadata"), dict):
        data["metadata"]["name"] = rng.choice(["ufm", "A-b_c.d", "x" * 63, "9a", "cluster.01"])
    elif op < 0.7 and isinstance(data.get("fabrics"), dict) and isinstance(data["fabrics"].get("compute"), dict):
        data["fabrics"]["compute"]["extra_endpoints"] = [
            {"name": rng.choice(["ufm", "A-b_c.d", "x" * 63, "mgmt.node_1"]), "count": rng.randint(1, 3),
             "ports": rng.randint(1, 4)}]
    elif isinstance(data.get("compute"), dict) and isinstance(data["compute"].get("count"), int):
        data["compute"]["count"] = max(1, data["compute"]["count"] * rng.choice([1, 2, 3]) // rng.choice([1, 2]))
    return data


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def mutant(rng: random.Random) -> bytes:
    seed = rng.choice(SEEDS).read_text(encoding="utf-8")
    if rng.random() < 0.15:
        return yaml.dump(_mild(_load(seed), rng), Dumper=_DUMPER, sort_keys=False).encode("utf-8")
    if rng.random() < 0.6:
        data = _load(seed)
        data = mutate_tree(data, rng)
        try:
            text = yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=rng.random() < 0.5)
        except (yaml.YAMLError, ValueError, RecursionError):
            text = seed
        return ("# yaml-language-server: $schema=x\n" + text).encode("utf-8") if rng.random() < 0.1 else \
            text.encode("utf-8")
    return mutate_text(seed, rng)


@dataclass
class Outcome:
    crashed: str | None       # what went wrong: a traceback, `internal error`, an exit code, strict JSON
    seconds: float            # `validate` through the entry point (the outputs after it are not timed)
    findings: int
    valid: bool


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"JSON holds {constant}")

    return json.loads(text, parse_constant=refuse)


def _entry_point(args: list[str]) -> tuple[int, str, str]:
    """`clusterplan ARGS` through the real entry point (main(): its exit code, its `internal error`)."""
    from validator.commands import main

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["clusterplan", *args]
    code: Any = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if exc.code is not None else 0
    finally:
        sys.argv = argv
    return code if isinstance(code, int) else 2, out.getvalue(), err.getvalue()


def _failure(code: int, out: str, err: str) -> str | None:
    if code not in (0, 1, 2):
        return f"exit code {code}\n{err}"
    if "internal error" in err or "Traceback" in out + err:
        return err or out
    return None


@dataclass(frozen=True)
class Sizes:
    """Outputs are made only below these sizes: a mutant with a million switches is valid, and its
    configurations are not what a fuzz run is for. The suite keeps them small (fast); the long run
    (benchmarks/fuzz.py) takes larger ones."""

    switches: int = 16         # render every configuration
    links: int = 2_000         # cabling CSV/JSON and the workbook


LONG_RUN = Sizes(switches=300, links=50_000)


def _outputs(analysis: Any, path: Path, sizes: Sizes) -> None:
    """Every output of an analysed design, in-process; JSON parsed strictly."""
    from validator.commands.common import dump_json
    from validator.derive.elevation import elevations
    from validator.derive.failures import analyze_failures
    from validator.emit import ci, tables
    from validator.emit.describe import describe, describe_text
    from validator.emit.failures import failures_json
    from validator.emit.overview import build_overview, overview_dot, overview_json
    from validator.emit.racks import racks_csv, racks_json, racks_text
    from validator.emit.render import render_configs
    from validator.emit.report import report_json
    from validator.emit.scorecard import scorecard
    from validator.emit.text import render_text
    from validator.emit.topology_dot import device_dot, device_json
    from validator.emit.workbook import build_workbook

    derived, topology = analysis.derived, analysis.topology
    bom, estimate = derived.bom, derived.estimate
    _strict_json(tables.bom_json(bom))
    tables.bom_csv(bom), tables.bom_text(bom), tables.bom_text(bom, markdown=True)
    _strict_json(dump_json(estimate.as_dict())), scorecard(estimate.as_dict())
    facts = describe(topology, derived)
    _strict_json(dump_json(facts)), describe_text(facts)
    _strict_json(dump_json(report_json([analysis], "error"))), render_text([analysis], {})
    _strict_json(dump_json(ci.sarif([analysis], ROOT)))
    ci.junit([analysis], "error"), ci.markdown([analysis], "error"), ci.github([analysis], ROOT)
    if derived.cabling.tally.links <= sizes.links:
        _strict_json(tables.cabling_json(derived.cabling)), "".join(tables.cabling_csv_rows(derived.cabling))
        build_workbook(path, analysis, "2026-12-01T00:00:00")
    elev = elevations(analysis.facts)
    _strict_json(racks_json(elev)), racks_csv(elev), racks_text(elev)
    _strict_json(dump_json(failures_json(analyze_failures(topology, derived))))
    if sum(f.switches for f in topology.fabrics.values()) <= sizes.switches:
        _strict_json(overview_json(build_overview(topology))), overview_dot(build_overview(topology))
        _strict_json("".join(device_json(topology))), "".join(device_dot(topology))
        for item in render_configs(topology):
            if item.path.endswith(".json"):
                _strict_json(item.text)


def run_one(data: bytes, workdir: Path, name: str = "mutant.yaml", sizes: Sizes = Sizes()) -> Outcome:
    import validator.pipeline as pipeline

    path = workdir / name
    path.write_bytes(data)
    start = time.perf_counter()
    seconds = 0.0
    seen: list[Any] = []
    real: Callable[..., Any] = pipeline.analyze

    def keep(*args: Any, **kwargs: Any) -> Any:
        seen.append(real(*args, **kwargs))
        return seen[-1]

    pipeline.analyze = keep
    try:
        code, out, err = _entry_point(["validate", str(path), "--format", "json"])
        seconds = time.perf_counter() - start
        failure = _failure(code, out, err)
        if failure is None and seen:
            _strict_json(out)
            if seen[0].topology is not None:
                _outputs(seen[0], path, sizes)
    except Exception:
        failure = traceback.format_exc()
    finally:
        pipeline.analyze = real
    findings = len(seen[0].findings) if seen else 0
    valid = bool(seen) and seen[0].topology is not None
    return Outcome(failure, seconds or time.perf_counter() - start, findings, valid and failure is None)
