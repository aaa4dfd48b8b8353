"""The rule cases of tests/rules/ (how to write one: tests/rules/README.md) and the merge patch that a
rule's docstring `Example:` is.

A case is a small complete design in `tests/rules/<RULE_ID>/<kind>.yaml`, kind one of pass, fail and
boundary. Its first lines are comments; among them one `# expect:` line per finding the design must
produce, `# expect: <RULE_ID> <severity> <line>` (add ` waived` for a finding a waiver accepts), or
the single line `# expect: none`. Cases run on RUN_DATE, so a waiver's expiry date means the same on
every day the suite runs.

A rule's `Example:` block is a JSON merge patch (RFC 7386) written in YAML: applied to the rule's
pass case, mappings merge key by key, `null` removes a key and any other value replaces what was
there; the patched design must trigger the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).resolve().parent / "rules"
KINDS = ("pass", "fail", "boundary")
RUN_DATE = date(2026, 12, 2)
_EXPECT = re.compile(r"#\s*expect:\s*(?P<body>.*?)\s*$")
_FINDING = re.compile(r"(?P<rule>[A-Z]{3}[0-9]{3}) (?P<severity>error|warning|info) (?P<line>[1-9][0-9]*)"
                      r"(?P<waived> waived)?")


@dataclass(frozen=True, order=True)
class Expected:
    """One finding a case must produce (or, from an analysis, one it did produce)."""

    rule: str
    severity: str
    line: int
    waived: bool = False

    def header(self) -> str:
        return f"# expect: {self.rule} {self.severity} {self.line}" + (" waived" if self.waived else "")


class HeaderError(ValueError):
    """A case file whose header does not say what it expects."""


def expected_findings(path: Path) -> list[Expected]:
    """The findings the header of a case file promises, sorted; [] for `# expect: none`."""
    bodies: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _EXPECT.fullmatch(line)
        if match:
            bodies.append(match["body"])
    if not bodies:
        raise HeaderError(f"{path}: no `# expect:` line in the comments at the top")
    if "none" in bodies:
        if bodies != ["none"]:
            raise HeaderError(f"{path}: `# expect: none` must be the only expect line")
        return []
    out = []
    for body in bodies:
        finding = _FINDING.fullmatch(body)
        if finding is None:
            raise HeaderError(f"{path}: `# expect: {body}` is not `<RULE_ID> <error|warning|info> <line> [waived]`")
        out.append(Expected(finding["rule"], finding["severity"], int(finding["line"]), bool(finding["waived"])))
    return sorted(out)


def case_files() -> list[Path]:
    """Every case file of every rule folder (whatever the folder is called: a new rule's folder is
    picked up without a change here)."""
    return sorted(p for folder in CASES_DIR.iterdir() if folder.is_dir() for p in folder.glob("*.yaml")
                  if p.name != BRANCHES)


def case_path(rule_id: str, kind: str) -> Path:
    return CASES_DIR / rule_id / f"{kind}.yaml"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: a mapping patches a mapping key by key (null removes the key);
    anything else replaces the target."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# ---- branch cases: a case per failure branch, each a merge patch of a case of the same folder ----------

BRANCHES = "branches.yaml"
_BRANCH_FINDING = re.compile(r"(?P<rule>[A-Z]{3}[0-9]{3}) (?P<severity>error|warning|info) (?P<path>\S+)"
                             r"(?P<waived> waived)?")


@dataclass(frozen=True, order=True)
class ExpectedAt:
    """One finding a branch case must produce, located by its key path (the patched design has no lines
    of its own to point at)."""

    rule: str
    severity: str
    path: str
    waived: bool = False

    def line(self) -> str:
        return f"{self.rule} {self.severity} {self.path}" + (" waived" if self.waived else "")


@dataclass(frozen=True)
class BranchCase:
    """`tests/rules/<RULE_ID>/branches.yaml`: a list of `{name, base, patch, expect}`; `base` is a case
    of the folder (pass, fail or boundary; pass when left out) or of another rule's (`TRN006/pass`, for
    a design of the other kind), `repository` the settings of a `.clusterplan.yaml` for the run (repository
    waivers, severities), `patch` a merge patch of the design, `expect` the
    findings of the patched design, every rule's, as `<RULE_ID> <severity> <key.path> [waived]`."""

    rule: str
    name: str
    base: Path
    patch: dict[str, Any]
    expect: tuple[ExpectedAt, ...]
    repository: dict[str, Any] | None = None

    def design(self) -> Any:
        import yaml

        return merge_patch(yaml.safe_load(self.base.read_text(encoding="utf-8")), self.patch)

    def text(self) -> str:
        import yaml

        return yaml.safe_dump(self.design(), sort_keys=False)

    def run_config(self) -> Any:
        """The run on RUN_DATE, with the case's `.clusterplan.yaml` settings (`repository:`) if it has any."""
        from validator.read.config import RepoConfig, RunConfig

        if self.repository is None:
            return RunConfig(today=RUN_DATE)
        return RunConfig(repo=RepoConfig.model_validate(self.repository), today=RUN_DATE)


def branch_cases() -> list[BranchCase]:
    """Every branch case of every rule folder, in file order."""
    import yaml

    out = []
    for folder in sorted(p for p in CASES_DIR.iterdir() if p.is_dir()):
        path = folder / BRANCHES
        if not path.is_file():
            continue
        for i, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            where = f"{path}: case {i + 1}"
            if set(entry) - {"name", "base", "patch", "expect", "repository"} or \
                    not isinstance(entry.get("patch"), dict):
                raise HeaderError(f"{where}: a branch case is {{name, base, patch, expect}} with a mapping patch")
            base = str(entry.get("base", "pass"))
            owner, _, kind = base.rpartition("/")      # `pass`, or another rule's case: `TRN006/pass`
            if kind not in KINDS or not (CASES_DIR / (owner or folder.name) / f"{kind}.yaml").is_file():
                raise HeaderError(f"{where}: base {base!r} is not a case, one of {KINDS} or <RULE_ID>/<kind>")
            expect = []
            for line in entry.get("expect") or []:
                m = _BRANCH_FINDING.fullmatch(str(line))
                if m is None:
                    raise HeaderError(f"{where}: `{line}` is not `<RULE_ID> <error|warning|info> <key.path> [waived]`")
                expect.append(ExpectedAt(m["rule"], m["severity"], m["path"], bool(m["waived"])))
            out.append(BranchCase(folder.name, str(entry.get("name", f"case {i + 1}")),
                                  CASES_DIR / (owner or folder.name) / f"{kind}.yaml",
                                  entry["patch"], tuple(sorted(expect)), entry.get("repository")))
    return out
