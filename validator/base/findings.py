"""Findings: what `validate` reports. A reading problem (YAML, schema, catalog reference) and an
engineering rule violation are both findings, so every output format treats them alike."""

from __future__ import annotations

from dataclasses import replace

from validator.base.errors import Diagnostic
from validator.base.facts import fact

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}

# Reading problems have rule-like IDs too, so they can be listed, explained and shown in SARIF.
READ_CODES: dict[str, tuple[str, str]] = {
    "YAML000": ("unreadable-file", "The file cannot be read as UTF-8 text within the size limit."),
    "YAML001": ("yaml-syntax", "The file is not valid YAML."),
    "YAML002": ("empty-file", "The file holds no YAML document."),
    "YAML003": ("yaml-expansion-bomb", "Anchors and aliases expand past the node limit."),
    "YAML004": ("yaml-complex-key", "A mapping key is not a plain scalar."),
    "YAML005": ("duplicate-key", "The same key appears twice in one mapping."),
    "YAML006": ("yaml-recursion", "An alias refers to a node containing it, or nesting or aliases go too deep."),
    "YAML007": ("non-finite-number", "A number is infinite, not a number, or too large to be finite."),
    "SCH001": ("schema", "The design does not match the design schema."),
    "SCH002": ("api-version", "The design's apiVersion is not supported."),
    "SCH003": ("model-type", "A value has the wrong type or form."),
    "SCH004": ("cross-field", "Two fields of the design contradict each other."),
    "CAT001": ("catalog-file", "A catalog file is not a `kind:` + `entries:` mapping."),
    "CAT002": ("catalog-entry", "A catalog entry does not match the catalog schema."),
    "CAT003": ("catalog-duplicate", "A catalog file defines the same id twice."),
    "CAT004": ("catalog-missing", "A catalog file named by the design does not exist."),
    "CAT005": ("catalog-escape", "A catalog file lies outside the design repository."),
    "REF001": ("unknown-reference", "A catalog id named by the design does not exist."),
    "TOP001": ("unbuildable-fabric", "The fabric cannot be built from the switches named."),
}


@fact
class Finding:
    rule: str
    slug: str
    severity: str
    message: str
    file: str
    line: int
    col: int
    path: str
    hint: str = ""
    title: str = ""
    waived: bool = False
    waiver_reason: str = ""

    @property
    def fingerprint(self) -> str:
        """Stable across edits that move lines: rule + file + key path."""
        import hashlib  # when used (SARIF, baselines): its import is ~4 ms of a cold validate

        return hashlib.sha256(f"{self.rule}\0{self.file}\0{self.path}".encode()).hexdigest()[:32]

    def waive(self, reason: str) -> Finding:
        return replace(self, waived=True, waiver_reason=reason)


def from_diagnostic(d: Diagnostic) -> Finding:
    slug, title = READ_CODES.get(d.code, ("read-error", "The design cannot be read."))
    return Finding(d.code, slug, "error", d.message, d.file, d.line, d.col, d.key_path, d.hint, title)


def sort_key(f: Finding) -> tuple[str, int, int, str, str]:
    return (f.file, f.line, f.col, f.rule, f.message)
