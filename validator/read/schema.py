"""The JSON Schema of the design format, generated from the pydantic model, and the
structural check that reports every problem at once with file:line:col, key path and a hint."""

from __future__ import annotations

import difflib
import json
from functools import cache
from typing import Any

from validator.base.errors import Diagnostic, Path, format_path
from validator.base.resources import load_schema
from validator.read.loader import Loaded

DESIGN_SCHEMA_FILE = "clusterplan-design.schema.json"
SCHEMA_ID = "https://clusterplan.dev/schemas/clusterplan-design.schema.json"


def _no_null_generator() -> type:
    """Optional fields are omitted, never written as null: the schema says so, which keeps the
    editor completion and the error messages simple ("expected integer" rather than "anyOf")."""
    from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
    from pydantic_core import core_schema

    class NoNull(GenerateJsonSchema):
        def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
            return self.generate_inner(schema["schema"])

        def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
            """A constrained key is a `propertyNames` pattern and every other key is refused (pydantic
            writes `patternProperties`, which lets a key that does not match through unchecked)."""
            out = super().dict_schema(schema)
            patterns = out.pop("patternProperties", None)
            if patterns:
                (pattern, value), = patterns.items()
                out["propertyNames"] = {**out.get("propertyNames", {}), "pattern": pattern}
                out["additionalProperties"] = value
            return out

        def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
            out = super().default_schema(schema)
            if out.get("default", 0) is None:
                out.pop("default")
            return out

    return NoNull


def generate_design_schema() -> dict[str, Any]:
    from validator.read.model import Design

    schema = Design.model_json_schema(by_alias=True, schema_generator=_no_null_generator())
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(DESIGN_SCHEMA_FILE))


def check_structure(loaded: Loaded) -> list[Diagnostic]:
    """Every structural problem of the document, sorted by position."""
    if not isinstance(loaded.data, dict):
        return [Diagnostic("SCH001", "a design must be a YAML mapping (key: value pairs)", loaded.file,
                           hint="start from an example in designs/")]
    diags = [d for err in _validator().iter_errors(loaded.data) for d in _describe(err, loaded)]
    # a misspelt key also makes the right one "missing": report it once, as the typo
    typos = {(d.path[:-1], d.hint.split("'")[1]) for d in diags
             if d.message.startswith("unknown key") and d.hint.startswith("did you mean")}
    diags = [d for d in diags if not (d.message.startswith("missing required key")
                                      and (d.path, d.message.split("'")[1]) in typos)]
    unique = {(d.line, d.col, d.message): d for d in diags}
    return sorted(unique.values(), key=lambda d: (d.line, d.col, d.message))


def _describe(err: Any, loaded: Loaded) -> list[Diagnostic]:
    path: Path = tuple(err.absolute_path)
    where = format_path(path)
    kind = err.validator
    schema = err.schema
    instance = err.instance

    def diag(message: str, hint: str, at: Path = path, key: bool = False) -> Diagnostic:
        line, col = loaded.where(at, key=key)
        return Diagnostic("SCH001", message, loaded.file, line, col, at, hint)

    if "propertyNames" in err.relative_schema_path:
        return [_key_problem(err, loaded, path)]
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        out = []
        for extra in sorted(set(instance) - set(allowed)):
            close = difflib.get_close_matches(extra, allowed, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
            out.append(diag(f"unknown key '{extra}' in {where}", hint, (*path, extra), key=True))
        return out
    if kind == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        props = schema.get("properties", {}).get(missing, {})
        desc = props.get("description", "")
        return [diag(f"missing required key '{missing}' in {where}", f"add `{missing}:`" +
                     (f" ({desc})" if desc else ""), key=False)]
    if kind == "enum" or kind == "const":
        allowed = [str(v) for v in (schema.get("enum") or [schema.get("const")])]
        close = difflib.get_close_matches(str(instance), allowed, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(allowed)}"
        return [diag(f"{where}: {instance!r} is not one of {', '.join(allowed)}", hint)]
    if kind == "type":
        expected = schema.get("type")
        expected_s = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return [diag(f"{where}: expected {_article(expected_s)}, got {_json_type(instance)} {_short(instance)}",
                     _type_hint(expected_s, schema))]
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kind]
        return [diag(f"{where}: {instance!r} is out of range; it must be {op} {err.validator_value}",
                     schema.get("description", "check the value"))]
    if kind in ("minLength", "maxLength", "minItems", "maxItems"):
        return [diag(f"{where}: {err.message}", schema.get("description", "check the value"))]
    if kind == "not" and isinstance(err.validator_value, dict) and "enum" in err.validator_value:
        return [diag(f"{where}: '{instance}' is a reserved name",
                     "choose another name; these name clusterplan's own devices: " +
                     ", ".join(map(str, err.validator_value["enum"])))]
    if kind == "pattern":
        from validator.read.names import IDENTIFIER_PATTERN, IDENTIFIER_RULE

        if err.validator_value == IDENTIFIER_PATTERN:
            return [diag(f"{where}: {_short(instance)} is not a valid name", f"a name is {IDENTIFIER_RULE}")]
        return [diag(f"{where}: {instance!r} does not match the expected form {err.validator_value}",
                     schema.get("description", "check the spelling"))]
    return [diag(f"{where}: {err.message}", schema.get("description", "see docs/design-format.md"))]


def _key_problem(err: Any, loaded: Loaded, path: Path) -> Diagnostic:
    """A key of a mapping whose keys are names (thresholds, rule IDs, catalog ids, DSCP values)."""
    from validator.read.names import IDENTIFIER_PATTERN, IDENTIFIER_RULE

    key = str(err.instance)
    where = format_path(path)
    at = (*path, key)
    line, col = loaded.where(at, key=True)
    if err.validator == "enum":
        allowed = [str(v) for v in err.validator_value]
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
        return Diagnostic("SCH001", f"unknown key '{key}' in {where}", loaded.file, line, col, at, hint)
    if err.schema.get("pattern") == IDENTIFIER_PATTERN:
        hint = f"a name is {IDENTIFIER_RULE}"
    else:
        hint = err.schema.get("description") or f"keys of {where} match {err.schema.get('pattern', '')}"
    return Diagnostic("SCH001", f"key {_short(key) or repr(key)} in {where} is not a valid name", loaded.file,
                      line, col, at, hint)


def _article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "mapping"


def _short(value: Any) -> str:
    if isinstance(value, dict | list):
        return ""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_hint(expected: str, schema: dict[str, Any]) -> str:
    desc = schema.get("description", "")
    if expected == "object":
        return "this key takes nested keys (a mapping)" + (f": {desc}" if desc else "")
    if expected == "array":
        return "this key takes a list (`- item` lines)" + (f": {desc}" if desc else "")
    if expected in ("integer", "number"):
        return "write a number without quotes or units" + (f": {desc}" if desc else "")
    return desc or "check the value"
