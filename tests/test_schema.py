"""The committed schemas match the models; examples validate against the committed schema."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.helpers import DESIGNS, ROOT
from validator.emit.docs import SCHEMA_URL
from validator.emit.schemas import generated_schemas
from validator.read.loader import load_yaml

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(generated_schemas()))
def test_committed_schema_matches_models(name):
    committed = (ROOT / "schemas" / name).read_text(encoding="utf-8")
    assert committed == generated_schemas()[name], f"schemas/{name} drifted: run `clusterplan schema -o ...`"


def test_every_field_has_a_description():
    schema = json.loads(generated_schemas()["clusterplan-design.schema.json"])
    missing = [f"{d}.{p}" for d, body in schema["$defs"].items() if body.get("type") == "object"
               for p, prop in body.get("properties", {}).items() if not prop.get("description")]
    missing += [p for p, prop in schema["properties"].items() if not prop.get("description")]
    assert not missing


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_match_schema_and_point_editors_at_it(path):
    text = path.read_text(encoding="utf-8")
    # an absolute URL, so the modeline works from a design at any depth; it names this repository's file
    first = text.splitlines()[0]
    assert first == f"# yaml-language-server: $schema={SCHEMA_URL}"
    assert SCHEMA_URL.endswith("/main/schemas/clusterplan-design.schema.json")
    schema = json.loads((ROOT / "schemas" / "clusterplan-design.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(load_yaml(text, path.name).data)


def test_schema_rejects_unknown_keys_and_nulls():
    schema = json.loads((ROOT / "schemas" / "clusterplan-design.schema.json").read_text())
    compute = schema["$defs"]["Compute"]
    assert compute["additionalProperties"] is False
    assert "null" not in json.dumps(compute)
