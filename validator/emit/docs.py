"""Generated documentation pages (`clusterplan docs`): docs/design-format.md from the schema."""

from __future__ import annotations

import json
from typing import Any

from validator.base.resources import data_text
from validator.emit.schemas import generated_schemas


def _type_of(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "allOf" in prop:
        return _type_of(prop["allOf"][0])
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(prop.get('items', {}))}"
    if kind == "object" and "additionalProperties" in prop and isinstance(prop["additionalProperties"], dict):
        return f"map of {_type_of(prop['additionalProperties'])}"
    return str(kind)


def _limits(prop: dict[str, Any]) -> str:
    parts = []
    for key, sym in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in prop:
            parts.append(f"{sym} {prop[key]:g}" if isinstance(prop[key], float) else f"{sym} {prop[key]}")
    if "default" in prop:
        parts.append(f"default `{json.dumps(prop['default'])}`")
    return ", ".join(parts)


def _table(body: dict[str, Any]) -> list[str]:
    required = set(body.get("required", []))
    rows = ["| key | type | required | description |", "|---|---|---|---|"]
    for key, prop in body.get("properties", {}).items():
        desc = prop.get("description", "")
        extra = _limits(prop)
        rows.append(f"| `{key}` | {_type_of(prop)} | {'yes' if key in required else ''} | "
                    f"{desc}{' (' + extra + ')' if extra else ''} |")
    return rows


SCHEMA_URL = "https://raw.githubusercontent.com/clusterplan/clusterplan/main/schemas/clusterplan-design.schema.json"


def design_format_md() -> str:
    schema = json.loads(generated_schemas()["clusterplan-design.schema.json"])
    out = ["# Design format (apiVersion: clusterplan/v1)", "",
           "Generated from the models by `clusterplan docs design-format`; do not edit by hand.",
           "A design is one YAML file: one cluster and its workload. Keys left out take their value",
           "from the catalog or from the documented data files in `validator/data/`.",
           "Editors that speak the YAML language server get completion and these descriptions as",
           f"tooltips from the first line `# yaml-language-server: $schema={SCHEMA_URL}`,",
           "which works from a design at any directory depth. Offline (an air-gapped lab), run",
           "`clusterplan schema --install <design or directory>`: it writes the packaged schema to",
           "`.clusterplan/clusterplan-design.schema.json` at the repository root and sets the first line",
           "of each design under the path to `# yaml-language-server: $schema=<relative path>` to it, so",
           "the editor validates with no network and no editor settings; run it again after an upgrade.",
           "", *data_text("fabric-shapes.md").rstrip("\n").split("\n"),
           "", "## Design (top level)", "", *_table(schema)]
    for name in sorted(schema.get("$defs", {})):
        body = schema["$defs"][name]
        if "enum" in body:
            out += ["", f"## {name}", "", "One of: " + ", ".join(f"`{v}`" for v in body["enum"]) + "."]
            continue
        if body.get("type") != "object":
            continue
        out += ["", f"## {name}", ""]
        if body.get("description"):
            out += [body["description"], ""]
        out += _table(body)
    return "\n".join(out) + "\n"


def rules_md() -> str:
    """docs/rules.md: one section per rule, from the registry and each check's docstring."""
    from validator.base.tables import sourced
    from validator.check.registry import RULES

    thresholds = sourced("thresholds.yaml", "thresholds")
    out = ["# Rules", "", "Generated from the rule registry by `clusterplan docs rules`; do not edit by hand.",
           "Severity can be overridden per design (`severity: {ID: warning}`); thresholds with",
           "`thresholds: {name: value}`; accepted findings are waived with `waivers:`.",
           "Each rule's example is a merge patch of a design (RFC 7386, in YAML: mappings merge key by key,",
           "`null` removes a key); the test suite applies it to the rule's passing case in `tests/rules/`",
           "and checks that the rule fires.", "",
           "| ID | slug | severity | applies to | waivable | title |", "|---|---|---|---|---|---|"]
    out += [f"| [{r.id}](#{r.id.lower()}) | `{r.slug}` | {r.severity} | {r.applies_to} | "
            f"{'yes' if r.waivable else 'no'} | {r.title} |" for r in RULES]
    from validator.base.findings import READ_CODES

    out += ["", "Reading checks run before the rules (always errors, never waivable):", "",
            "| ID | slug | what |", "|---|---|---|"]
    out += [f"| [{rid}](#{rid.lower()}) | `{slug}` | {what} |" for rid, (slug, what) in sorted(READ_CODES.items())]
    for r in RULES:
        out += ["", f"## {r.id}", "", f"**{r.title}** (`{r.slug}`, {r.severity}, {r.applies_to})", "",
                r.doc["rationale"], "", f"- Source: {r.doc['source']}", f"- Fix: {r.doc['fix']}"]
        if r.doc["example"]:
            out += ["", "Example that triggers it:", "", "```yaml", r.doc["example"], "```"]
        for name in r.thresholds:
            t = thresholds[name]
            out.append(f"- Threshold `{name}` = {t.value} ({t.source})")
    from validator.emit.rule_help import READ_FIXES

    for rid, (slug, what) in sorted(READ_CODES.items()):
        out += ["", f"## {rid}", "", f"**{what}** (`{slug}`, error, reading check)", "", f"- Fix: {READ_FIXES[rid]}"]
    return "\n".join(out) + "\n"
