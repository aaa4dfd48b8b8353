"""One home for each fact (issue 26): rules and outputs read the derived facts, they never recompute
them; a data table is read through its loader (validator/base/tables.py); the figures several stages
share (planned replicas, thresholds) are computed in one place.

The import-linter `forbidden` contract of pyproject.toml keeps rules and outputs out of the estimator's
modules (tests/test_lint.py runs it); the tests here check, on the source, what a contract on imports
cannot see: a rule that calls a function of the derive stage is computing a fact itself."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.helpers import ROOT

VALIDATOR = ROOT / "validator"
# the rules, what they share and what they see (the engine builds the Derived they read)
RULE_FILES = sorted([*(VALIDATOR / "check" / "rules").glob("*.py"), VALIDATOR / "check" / "shared.py",
                     VALIDATOR / "check" / "context.py"])
# helpers of the derive stage that name things rather than compute a figure
NAMING = {"device_namer"}
# the switch-OS plug-in's capability lookups (derive/switch_os.py, one home): what an OS can express, asked
# by the rule that refuses what it cannot and by the config that renders it
CAPABILITY = {"watchdog_timers", "lossless_headroom"}
EMIT_FILES = sorted((VALIDATOR / "emit").rglob("*.py"))


def _derive_names(tree: ast.AST) -> dict[str, str]:
    """Names a module imports from the derive stage, with the module they come from."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("validator.derive"):
            for alias in node.names:
                out[alias.asname or alias.name] = node.module or ""
    return out


def _calls_to(tree: ast.AST, names: dict[str, str]) -> list[str]:
    """Calls of those names (a class used as a type is fine; calling a function computes something)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names \
                and node.func.id not in NAMING | CAPABILITY:
            found.append(f"{node.func.id}() from {names[node.func.id]} at line {node.lineno}")
    return found


def recomputed_facts(files: list[Path]) -> list[str]:
    out = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [f"{path.relative_to(ROOT)}: {c}" for c in _calls_to(tree, _derive_names(tree))]
    return out


def test_rules_never_call_the_derive_stage():
    """A rule reads `ctx.derived` (or `ctx.estimate`); it never calls a function of validator.derive,
    which would recompute a fact beside the one every output shows."""
    assert recomputed_facts(RULE_FILES) == []


def test_the_detector_sees_a_rule_that_recomputes(tmp_path):
    """The check above would catch the way six rules used to compute the KV capacity themselves."""
    rule = tmp_path / "kv_rule.py"
    rule.write_text("from validator.derive.estimate.kv import kv_capacity, shape_of\n"
                    "def check(ctx):\n    s = shape_of(ctx.inference.replica)\n"
                    "    return kv_capacity(ctx.resolved.model, ctx.inference, 80, 0.9, 4, s.tp, s.pp, s.gpus)\n")
    tree = ast.parse(rule.read_text())
    assert [c.split(" from")[0] for c in _calls_to(tree, _derive_names(tree))] == ["shape_of()", "kv_capacity()"]


def test_the_ci_summary_reads_the_estimate_it_was_given():
    """emit/ci.py formats the derived estimate; it never runs the estimator again."""
    tree = ast.parse((VALIDATOR / "emit" / "ci.py").read_text(encoding="utf-8"))
    names = _derive_names(tree)
    assert not any(m.startswith("validator.derive.estimate") for m in names.values()), names
    assert recomputed_facts([VALIDATOR / "emit" / "ci.py"]) == []


def test_outputs_never_call_the_estimator():
    """No output module calls a function of validator.derive.estimate (it reads Derived.estimate)."""
    calls = [c for c in recomputed_facts(EMIT_FILES) if "validator.derive.estimate" in c]
    assert calls == []


def test_the_forbidden_contract_is_declared():
    """pyproject.toml forbids validator.check and validator.emit to import any module inside the
    estimator; tests/test_lint.py::test_pipeline_layers_contract runs every contract."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    forbidden = [c for c in contracts if c["type"] == "forbidden"]
    assert any({"validator.check", "validator.emit"} <= set(c["source_modules"])
               and "validator.derive.estimate.*" in c["forbidden_modules"] for c in forbidden), forbidden


def _text_hits(needle: str) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in VALIDATOR.rglob("*.py") if needle in p.read_text(encoding="utf-8"))


def test_planned_replicas_have_one_home():
    """The planned replica count (fixed, else autoscaling.max, else 1) is `Inference.planned_replicas`."""
    assert _text_hits("autoscaling.max if") == ["validator/read/inference.py"]


def test_thresholds_are_looked_up_in_one_place():
    """thresholds.yaml is read by its loader only; rules, estimator and docs ask validator.base.tables
    (through Resolved.threshold, which applies the design's overrides)."""
    assert _text_hits('"thresholds.yaml"') == ["validator/base/tables.py", "validator/emit/docs.py"]
    assert _text_hits('["thresholds"]') == []


def test_sourced_tables_are_unwrapped_in_one_place():
    """`{k: v["value"] for ...}` over a data table is written once, in validator/base/tables.py."""
    assert _text_hits('v["value"] for k, v in') == []


def test_rules_and_outputs_read_tables_through_their_loaders():
    """No rule and no output calls load_data(): each table has its typed loader."""
    users = [str(p.relative_to(ROOT)) for p in [*RULE_FILES, *EMIT_FILES] if "load_data(" in p.read_text()]
    assert users == [], users


# Tables still read as dictionaries where they are used, each with why; the list may only shrink. Issue 26
# asks for none, and none is left: the estimator's tables load through validator/base/estimate_tables.py.
UNTYPED: dict[str, str] = {}


def test_data_tables_are_read_by_their_loaders():
    """Outside validator/base (tables.py and the loaders beside it) no module reads a data table with
    load_data(); the few left are listed in UNTYPED, which may only shrink."""
    users = {str(p.relative_to(ROOT)) for p in VALIDATOR.rglob("*.py")
             if "load_data(" in p.read_text(encoding="utf-8") and p.parent.name != "base"}
    assert users <= set(UNTYPED), sorted(users - set(UNTYPED))
    assert set(UNTYPED) <= users, f"strike from UNTYPED: {sorted(set(UNTYPED) - users)}"


# Output schemas still written by hand, each with why; the list may only shrink. Issue 26 asks for none,
# and none is left (the estimate's is generated from validator/emit/output_models_estimate.py).
HAND_WRITTEN_SCHEMAS: dict[str, str] = {}


def test_output_schemas_are_generated_from_models():
    """Every schema under schemas/ comes from a model (`clusterplan schema --check` compares each), but
    for the hand-written ones listed above."""
    from validator.emit.schemas import generated_schemas

    files = {p.name for p in (ROOT / "schemas").glob("*.json")}
    generated = set(generated_schemas())
    assert files - generated == set(HAND_WRITTEN_SCHEMAS), sorted(files - generated)


def test_the_estimate_schema_is_generated_and_holds_every_key():
    """schemas/estimate.schema.json comes from the typed estimate (validator/emit/output_models_estimate.py):
    an example's estimate validates, and the schema rejects an unknown key, a missing headline figure and an
    MFU over 1, as the hand-written schema did (extra keys: stricter, training estimates now included)."""
    import json

    import jsonschema

    from validator.api import estimate
    from validator.emit.schemas import generated_schemas

    schema = json.loads(generated_schemas()["estimate.schema.json"])
    assert schema == json.loads((ROOT / "schemas" / "estimate.schema.json").read_text())
    check = jsonschema.Draft202012Validator(schema)
    data = json.loads(json.dumps(estimate(ROOT / "designs" / "roce-h100-2tier.yaml")))
    check.validate(data)
    assert not check.is_valid({**data, "unknown_figure": 1})
    assert not check.is_valid({k: v for k, v in data.items() if k != "mfu"})
    assert not check.is_valid({**data, "mfu": 1.2})
    assert not check.is_valid({**data, "kind": "inference"})
