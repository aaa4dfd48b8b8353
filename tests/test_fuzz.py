"""Bad input never crashes clusterplan: 500+ mutated designs per run, safe YAML, bounded time,
deterministic results, atomic writes."""

from __future__ import annotations

import dataclasses
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import SEEDS, mutant, run_one
from tests.fuzzing_repo import TEMPLATES, RepoMutant, repo_mutant, run_repo
from tests.helpers import FIXTURES, cli
from validator.base.findings import READ_CODES
from validator.emit.files import write_atomic
from validator.pipeline import analyze

FUZZ_COUNT = int(os.environ.get("CLUSTERPLAN_FUZZ_COUNT", "300"))


def test_fuzz_mutated_designs_never_crash(tmp_path):
    """Every mutant is read, reported or analysed without an exception. (How long each takes is a
    benchmark, not a test: `python benchmarks/fuzz.py` prints the slowest.)"""
    rng = random.Random(20261202)
    valid = 0
    for i in range(FUZZ_COUNT):
        outcome = run_one(mutant(rng), tmp_path)
        assert outcome.crashed is None, f"mutant {i} crashed:\n{outcome.crashed}"
        valid += outcome.valid
    assert FUZZ_COUNT // 20 < valid < FUZZ_COUNT   # the mix reaches both the reading errors and every output


@pytest.mark.parametrize("template", [t for t in TEMPLATES if "99999" not in t])   # the loop bomb: in the long run
def test_repository_mutants_are_defended(tmp_path, template):
    """One repository mutant per hostile template (with a hostile file name, a weakened or hostile
    `.clusterplan.yaml` and a forged manifest), through validate, render, bom and outputs: no crash, no
    workflow command or raw control character on stdout, valid JUnit, nothing under .git/ touched
    (tests/fuzzing_repo.py; benchmarks/fuzz.py mixes them into the long run)."""
    rng = random.Random(template)
    base = repo_mutant(rng)
    design = (FIXTURES / "valid" / "small-inference.yaml").read_bytes().replace(
        b"kind: InferenceFleet", b"kind: InferenceFleet\ntemplates: tpl", 1)
    outcome = run_repo(RepoMutant(design, base.name, base.config, base.manifest, template), tmp_path)
    assert outcome.crashed is None, outcome.crashed


def test_the_mutator_makes_every_grammar_class():
    """Names of every character class where names go and as keys, anchors with aliases and merges
    (recursive ones too), huge and non-finite numbers, deep nesting."""
    rng = random.Random(5)
    texts = [mutant(rng).decode("utf-8", errors="replace") for _ in range(600)]
    every = "\n".join(texts)
    classes = {
        "merge": "<<: \\*sec", "recursive merge": "<<: \\*self", "recursive alias": "loop: \\[\\*self\\]",
        "alias chain": ": &b3 \\[\\*b2", "non-finite": "\\.inf", "overflow": "1e999", "nan": "\\.nan",
        "huge integer": "1" + "0" * 400, "deep flow nesting": "\\[" * 200, "deep block nesting": "    d:\\n     d:",
        "name with a slash": "name: a/b", "name with a line break": "hostname x", "formula name": "name: =1\\+1",
        "reserved name": "name: (server|leaf|spine|core|storage|rack-system)\\n", "hostile key": "'{{ 7\\*7 }}':",
        "near-miss key": "min_spines",
    }
    missing = [label for label, pattern in classes.items() if not re.search(pattern, every)]
    assert not missing, missing


@pytest.mark.parametrize(("fault", "expected"), [
    (RuntimeError("boom"), "internal error: RuntimeError: boom"),
    (SystemExit(3), "exit code 3"),
])
def test_the_harness_counts_internal_errors_and_odd_exit_codes(tmp_path, monkeypatch, fault, expected):
    import validator.check.engine as engine
    import validator.pipeline as pipeline

    def broken(*args, **kwargs):
        raise fault

    monkeypatch.setattr(pipeline, "run_rules", broken)
    monkeypatch.delenv("CLUSTERPLAN_DEBUG", raising=False)
    assert engine is not None
    outcome = run_one((FIXTURES / "valid" / "small-inference.yaml").read_bytes(), tmp_path)
    assert outcome.crashed is not None and expected in outcome.crashed


def test_the_harness_refuses_infinity_in_json(tmp_path, monkeypatch):
    from validator.emit import tables

    monkeypatch.setattr(tables, "bom_json", lambda bom: '{"capex": Infinity}')
    outcome = run_one((FIXTURES / "valid" / "small-inference.yaml").read_bytes(), tmp_path)
    assert outcome.crashed is not None and "JSON holds Infinity" in outcome.crashed


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_mutants_have_exit_codes_0_1_2_and_are_deterministic(tmp_path, seed):
    data = mutant(random.Random(seed))
    path = tmp_path / "m.yaml"
    path.write_bytes(data)
    first = analyze(path, "m.yaml")
    second = analyze(path, "m.yaml")
    assert [f.fingerprint + f.message for f in first.findings] == [f.fingerprint + f.message for f in second.findings]
    code, _, _ = cli("validate", str(path))
    assert code in (0, 1, 2)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(text=st.text(max_size=400))
def test_arbitrary_text_is_reported_not_raised(tmp_path_factory, text):
    """Whatever follows the header, the design is either analysed or refused with reading errors that
    point into the file: never an exception, never a silent empty result."""
    source = "apiVersion: clusterplan/v1\n" + text
    path = tmp_path_factory.mktemp("t") / "d.yaml"
    path.write_text(source, encoding="utf-8")
    analysis = analyze(path, "d.yaml")
    if analysis.topology is None:
        assert analysis.findings, "a design that cannot be read must say why"
        lines = len(source.splitlines()) + 1   # every line break YAML knows, and the end of the file
        for f in analysis.findings:
            assert f.rule in READ_CODES and f.severity == "error" and 1 <= f.line <= lines, (f.rule, f.line)
    else:
        assert analysis.topology.resolved.design.api_version == "clusterplan/v1"


def test_no_object_construction_from_tags(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "d.yaml"
    path.write_text(f'apiVersion: clusterplan/v1\nx: !!python/object/apply:os.system ["touch {marker}"]\n')
    analysis = analyze(path, "d.yaml")
    assert not marker.exists() and analysis.findings


def test_alias_bomb_is_refused_within_the_node_budget(tmp_path):
    """Twelve levels of ten aliases each expand to 10**12 values; YAML003 is raised by the reader's node
    budget, so the reader stopped after limits().max_yaml_nodes values instead of expanding them all
    (the work is bounded by the budget, whatever the machine; its time is a benchmark)."""
    from validator.base.limits import limits

    levels = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    path = tmp_path / "bomb.yaml"
    path.write_text("apiVersion: clusterplan/v1\n" + "\n".join(levels) + "\n")
    assert limits().max_yaml_nodes < 10**12
    findings = analyze(path, "bomb.yaml").findings
    assert [f.rule for f in findings] == ["YAML003"]
    assert f"more than {limits().max_yaml_nodes:,} nodes" in findings[0].message


def test_oversized_file_is_refused(tmp_path):
    from validator.base.limits import limits

    path = tmp_path / "big.yaml"
    path.write_text("apiVersion: clusterplan/v1\n" + "# padding\n" * (limits().max_file_bytes // 10 + 1))
    findings = analyze(path, "big.yaml").findings
    assert findings[0].rule == "YAML000" and "limit" in findings[0].message


def test_too_many_files_is_a_clear_error(tmp_path, monkeypatch):
    from validator.base import limits as limits_module

    few = dataclasses.replace(limits_module.limits(), max_files=3)
    monkeypatch.setattr(limits_module, "limits", lambda: few)
    import validator.pipeline as pipeline

    monkeypatch.setattr(pipeline, "limits", limits_module.limits)
    good = (FIXTURES / "valid" / "small-inference.yaml").read_text()
    for i in range(5):
        (tmp_path / f"d{i}.yaml").write_text(good)
    code, _, err = cli("validate", str(tmp_path))
    assert code == 2 and "more than 3 design files" in err


def test_unreadable_file_reports_without_traceback(tmp_path, monkeypatch):
    """A file the operating system refuses to read (permissions) is a finding, not a traceback. The
    refusal is simulated at `os.open`, the one call the reader opens files with, so the test runs the
    same as root (which reads anything) and as a user."""
    path = tmp_path / "locked.yaml"
    path.write_text((FIXTURES / "valid" / "small-inference.yaml").read_text())
    real_open = os.open

    def open_(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file).endswith("locked.yaml"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    code, out, _ = cli("validate", str(path))
    assert code == 1 and "YAML000" in out and "Permission denied" in out


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "bom.json"
    target.write_text("previous")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(target, "new content")
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["bom.json"]   # no temporary file left behind


def test_outputs_are_byte_identical(tmp_path):
    design = "designs/roce-h100-2tier.yaml"
    for fmt, extra in (("bom", ["--format", "json"]), ("bom", ["--format", "csv"]), ("cabling", [])):
        a, b = tmp_path / "a", tmp_path / "b"
        cli(fmt, design, *extra, "-o", str(a))
        cli(fmt, design, *extra, "-o", str(b))
        assert a.read_bytes() == b.read_bytes()
    s1, s2 = tmp_path / "1.sarif", tmp_path / "2.sarif"
    cli("validate", design, "--output", f"sarif={s1}")
    cli("validate", design, "--output", f"sarif={s2}")
    assert s1.read_bytes() == s2.read_bytes()


@pytest.mark.parametrize("seed_path", SEEDS, ids=lambda p: Path(p).stem)
def test_every_seed_runs_clean_through_the_fuzz_harness(tmp_path, seed_path):
    outcome = run_one(Path(seed_path).read_bytes(), tmp_path)
    assert outcome.crashed is None and outcome.valid


def test_fast_path_accepts_nothing_the_schema_rejects(tmp_path):
    """read_design skips jsonschema when strict pydantic accepts a document: that must never let a
    structurally invalid document through."""
    from validator.read.design_file import _fast_valid
    from validator.read.loader import load_yaml
    from validator.read.schema import check_structure

    rng = random.Random(7)
    accepted = 0
    for _ in range(400):
        data = mutant(rng)
        try:
            loaded = load_yaml(data.decode("utf-8"), "m.yaml")
        except Exception:
            continue
        if _fast_valid(loaded.data) is not None:
            accepted += 1
            assert check_structure(loaded) == [], data.decode("utf-8")[:300]
    assert accepted > 0
