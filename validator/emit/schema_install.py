"""`clusterplan schema --install PATH`: the design schema written into the design repository, and the
designs' editor modeline pointed at it by a relative path, so an editor validates offline (an
air-gapped lab has no https to the published schema).

The schema goes to `<repository root>/.clusterplan/clusterplan-design.schema.json` (the root is the
git work tree holding PATH, else PATH's directory). Each design under PATH (a file, or every
`*.yaml` / `*.yml` in a directory tree whose text declares `apiVersion: clusterplan/`) gets the first
line `# yaml-language-server: $schema=<relative path>`: an existing modeline is replaced, otherwise
one is added. Nothing is written outside the repository; files are rewritten atomically.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from validator.base.paths import confine, repository_root
from validator.emit.files import write_atomic

SCHEMA_DIR = ".clusterplan"
SCHEMA_FILE = "clusterplan-design.schema.json"
MODELINE = "# yaml-language-server: $schema="
_MODELINE_RE = re.compile(r"^#\s*yaml-language-server:\s*\$schema=\S*[^\n]*$")
_DESIGN_RE = re.compile(r"^apiVersion:\s*['\"]?clusterplan/", re.M)
_MAX_BYTES = 4 * 1024 * 1024      # a design is small; anything larger is not one


def _designs(path: Path, root: Path) -> Iterator[Path]:
    candidates = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and ".git" not in p.parts)
    for p in candidates:
        if p.is_symlink() or not p.is_file() or p.stat().st_size > _MAX_BYTES:
            continue
        confine(p, root, "design")
        text = p.read_text(encoding="utf-8", errors="replace")
        if _DESIGN_RE.search(text):
            yield p


def with_modeline(text: str, relative: str) -> str:
    """The design text with its first line the modeline to `relative` (replacing an existing one)."""
    line = f"{MODELINE}{relative}"
    first, sep, rest = text.partition("\n")
    if _MODELINE_RE.match(first):
        return f"{line}\n{rest}" if sep else line + "\n"
    return f"{line}\n{text}"


def install_schema(path: Path, schema_text: str) -> tuple[Path, list[Path]]:
    """Write the schema into the repository of `path` and point every design under `path` at it;
    returns the schema's path and the designs whose modeline changed."""
    root = repository_root(path)
    target = confine(root / SCHEMA_DIR / SCHEMA_FILE, root, "schema")
    write_atomic(target, schema_text)
    changed = []
    for design in _designs(path, root):
        text = design.read_text(encoding="utf-8")
        relative = Path(os.path.relpath(target, design.resolve().parent)).as_posix()
        new = with_modeline(text, relative)
        if new != text:
            write_atomic(design, new)
            changed.append(design)
    return target, changed
