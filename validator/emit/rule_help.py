"""What a user reads to fix a finding: each rule's section of docs/rules.md (SARIF helpUri) and a
fix text for the reading checks, which have no rule module."""

from __future__ import annotations

RULES_DOC = "https://github.com/clusterplan/clusterplan/blob/main/docs/rules.md"

READ_FIXES: dict[str, str] = {
    "YAML000": "Save the file as UTF-8 text and keep it under the size limit (split a huge design into several files).",
    "YAML001": "Correct the YAML at the line shown (indentation, a missing colon, an unclosed quote or bracket).",
    "YAML002": "Put the design in the file: apiVersion, kind, metadata and the sections of the design format.",
    "YAML003": "Write the values out instead of nesting aliases; anchors and aliases may not expand past the limit.",
    "YAML004": "Use a plain string as the key (no mappings, lists or `? ` complex keys).",
    "YAML005": "Keep one of the two entries: the second silently replaces the first in most YAML readers.",
    "YAML006": "Remove the alias that refers to the node containing it, and keep nesting and alias chains shallow "
               "(write the values out).",
    "YAML007": "Write the number as a finite value within the field's range (no .inf, .nan or 1e999).",
    "SCH001": "Fix the field the message names; `clusterplan schema` prints the design format, docs/design-format.md "
              "explains each field, and the schema modeline gives your editor completion.",
    "SCH002": "Set `apiVersion: clusterplan/v1` at the top of the design (the only version this release reads).",
    "SCH003": "Give the value the type and form the message names (a number, one of the listed words, a ratio such "
              "as '1:1').",
    "SCH004": "Make the two fields agree as the message says, or drop the one that follows from the other.",
    "CAT001": "Start the catalog file with `kind: <entry kind>` and list its entries under `entries:`.",
    "CAT002": "Fix the entry's field the message names; `clusterplan schema catalog` prints the catalog format.",
    "CAT003": "Give each entry of the file its own id, or remove the duplicate.",
    "CAT004": "Correct the path under `catalogs:` (relative to the design file) or add the file.",
    "CAT005": "Move the catalog file inside the design's repository and name it by a relative path.",
    "REF001": "Use an id from `clusterplan catalog` (the message suggests the nearest), or add the part to a "
              "catalog file named under `catalogs:`.",
    "TOP001": "Pick switches whose ports can carry the fabric at its speed (see `clusterplan describe`), lower the "
              "speed, or add a tier.",
}


def help_uri(rule_id: str) -> str:
    """The rule's section of docs/rules.md (a heading `## ID` has the anchor `#id`)."""
    return f"{RULES_DOC}#{rule_id.lower()}"
