"""Generated files a design repository commits (declared in .clusterplan.yaml): regenerate them and say
which differ, as documentation-generator hooks do.

Every declared path must stay inside the repository (symlinks followed). Nothing is written for a
design with error findings unless forced. A render directory is written as one set (emit/files.py
OutputSet), each other file atomically. `.clusterplan-outputs.json` beside the configuration lists what
`outputs` wrote: a file it wrote earlier and no longer produces is removed; a file it did not write is
never overwritten or removed (unless it already holds exactly what would be written).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from validator.base.errors import ToolError
from validator.base.paths import OutsideRepository, confine, display_name, repository_root, walk
from validator.check.result import Analysis
from validator.emit.files import MANIFEST, OutputSet, read_manifest, write_atomic
from validator.emit.report import fails
from validator.emit.workbook import build_workbook
from validator.pipeline import analyze
from validator.read.config import RunConfig

if TYPE_CHECKING:
    from validator.derive.bom import Bom

OUTPUTS_MANIFEST = ".clusterplan-outputs.json"


class Gated(ToolError):
    """Outputs were not written: a design has error findings (exit 1)."""

    def __init__(self, message: str, analyses: list[tuple[Path, Analysis]]) -> None:
        super().__init__(message)
        self.analyses = analyses


@dataclass
class Plan:
    """What the declared outputs should hold: single files and render directories (absolute paths)."""

    files: dict[Path, bytes] = field(default_factory=dict)
    sets: dict[Path, dict[str, bytes]] = field(default_factory=dict)
    failing: list[tuple[Path, Analysis]] = field(default_factory=list)


def _bom_bytes(design: Path, analysis: Analysis, target: Path) -> bytes:
    from validator.emit import tables

    suffix = target.suffix.lower()
    if suffix == ".xlsx":
        return build_workbook(design, analysis)
    assert analysis.derived is not None
    bom = analysis.derived.bom
    makers: dict[str, Callable[[Bom], str]] = {
        ".json": tables.bom_json, ".csv": tables.bom_csv, ".md": lambda b: tables.bom_text(b, markdown=True),
        ".txt": tables.bom_text}
    if suffix not in makers:
        raise ToolError(f"{target}: BOM format from the suffix must be .json, .csv, .md, .txt or .xlsx")
    return makers[suffix](bom).encode("utf-8")


def _cabling_bytes(design: Path, analysis: Analysis, target: Path) -> bytes:
    from validator.emit import tables

    suffix = target.suffix.lower()
    if suffix == ".xlsx":
        return build_workbook(design, analysis, kind="cabling")
    assert analysis.derived is not None
    plan = analysis.derived.cabling
    if suffix == ".json":
        return tables.cabling_json(plan).encode("utf-8")
    if suffix == ".csv":
        return "".join(tables.cabling_csv_rows(plan)).encode("utf-8")
    raise ToolError(f"{target}: cabling format from the suffix must be .csv, .json or .xlsx")


def _inside(root: Path, base: Path, rel: str, what: str) -> Path:
    try:
        return confine(base / rel, root, what)
    except OutsideRepository as exc:
        raise ToolError(f"{exc} (declared in .clusterplan.yaml)") from None


def _target(root: Path, base: Path, rel: str, what: str) -> Path:
    """A declared output path: inside the repository, and never under .git/ (the checkout itself)."""
    path = _inside(root, base, rel, what)
    if in_git_dir(path.relative_to(Path(os.path.realpath(root)))):
        raise ToolError(f"{what} '{rel}' is inside .git/ (declared in .clusterplan.yaml); outputs are never "
                        "written there")
    return path


def _entry(root: Path, base: Path, rel: str) -> Path:
    """A path a manifest lists, to remove: relative, without '..', and the directory it is in must
    resolve inside `root` (removing an entry never follows the entry itself: a symlink is removed, not
    what it points to)."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise ToolError(f"{OUTPUTS_MANIFEST}: not a relative path: {rel!r}")
    path = base.joinpath(*parts)
    real = _inside(root, path.parent, ".", f"{OUTPUTS_MANIFEST} entry {rel!r}")
    if in_git_dir(PurePosixPath(rel)) or in_git_dir(real.relative_to(Path(os.path.realpath(root)))):
        raise ToolError(f"{OUTPUTS_MANIFEST}: {rel!r} is inside .git/; outputs are never written or removed there")
    return path


def plan(config_path: Path, run: RunConfig, gate: bool = False) -> Plan:
    """Analyse every declared design, then compute its outputs in memory; nothing is written. With
    `gate`, raise Gated for a design with error findings before any output is made.

    Every design is analysed before any output is made, so that nothing an output does (a repository
    template is untrusted code) can reach another design's analysis (docs/security.md)."""
    base = config_path.parent
    root = repository_root(config_path)
    out = Plan()
    analysed: list[tuple[int, Path, Analysis]] = []
    for i, spec in enumerate(run.repo.outputs):
        design = _inside(root, base, spec.design, f"outputs[{i}].design")
        if not design.is_file():
            raise ToolError(f"{config_path}: design {spec.design} does not exist")
        analysis = analyze(design, display_name(design), run)
        if analysis.topology is None:
            first = analysis.findings[0]
            raise ToolError(f"{first.file}:{first.line}:{first.col}: {first.message} "
                            "(fix the design before regenerating its outputs)")
        if fails(analysis, "error"):
            out.failing.append((design, analysis))
        analysed.append((i, design, analysis))
    if out.failing and gate:
        names = ", ".join(display_name(p) for p, _ in out.failing)
        raise Gated(f"{names}: error findings; nothing is written for a design that fails validation (fix it, "
                    "or pass --force to write anyway)", out.failing)
    for i, design, analysis in analysed:
        _plan_outputs(out, root, base, i, run.repo.outputs[i], design, analysis)
    return out


def _plan_outputs(out: Plan, root: Path, base: Path, i: int, spec: Any, design: Path, analysis: Analysis) -> None:
    """The declared outputs of one analysed design (a template error is raised as it is: exit 1)."""
    from validator.emit.render import render_configs, user_templates

    assert analysis.topology is not None
    if spec.bom:
        target = _target(root, base, spec.bom, f"outputs[{i}].bom")
        out.files[target] = _bom_bytes(design, analysis, target)
    if spec.cabling:
        target = _target(root, base, spec.cabling, f"outputs[{i}].cabling")
        out.files[target] = _cabling_bytes(design, analysis, target)
    if spec.render:
        target = _target(root, base, spec.render, f"outputs[{i}].render")
        templates = user_templates(design, analysis.topology.resolved.design.templates)
        out.sets[target] = {item.path: item.text.encode("utf-8")
                            for item in render_configs(analysis.topology, templates)}


def _set_is_current(directory: Path, files: dict[str, bytes]) -> bool:
    if read_manifest(directory).keys() != files.keys():
        return False
    return all(_read(directory / rel) == data for rel, data in files.items())


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def _key(base: Path, path: Path) -> str:
    return path.relative_to(base.resolve()).as_posix() if path.is_relative_to(base.resolve()) else str(path)


def refresh(config_path: Path, run: RunConfig, write: bool, force: bool = False) -> list[tuple[str, Path]]:
    """(what, path) for every generated file that is not current: `stale` (with `write` off),
    `regenerated` or `removed`, `kept` for a listed file that is not as clusterplan wrote it; with --force,
    `forced` for each design written despite error findings. Raises Gated, before writing anything, for a
    design with error findings."""
    base = config_path.parent.resolve()
    wanted = plan(config_path, run, gate=write and not force)
    manifest_path = base / OUTPUTS_MANIFEST
    previous = read_manifest_file(manifest_path)
    entries = {_key(base, p): _sha256(d) for p, d in wanted.files.items()} | \
        {_key(base, p): DIRECTORY for p in wanted.sets}
    _refuse_foreign(base, wanted, previous)
    changes: list[tuple[str, Path]] = []
    label = "regenerated" if write else "stale"
    for path, data in wanted.files.items():
        if _read(path) != data:
            changes.append((label, path))
    for directory, files in wanted.sets.items():
        if not _set_is_current(directory, files):
            changes.append((label, directory))
    root = repository_root(config_path)
    listed = [(_entry(root, base, rel), previous[rel]) for rel in sorted(set(previous) - set(entries))]
    gone = [p for p, recorded in listed if _removable(p, recorded)]
    changes += [("removed" if write else "stale", p) for p in gone]
    changes += [("kept", p) for p, recorded in listed if p not in gone and (p.exists() or p.is_symlink())]
    if previous != entries:
        changes.append((label, manifest_path))
    if write and changes:
        intent = previous | {k: ",".join(dict.fromkeys([*previous.get(k, "").split(","), v])).strip(",")
                             for k, v in entries.items()}
        _write(wanted, intent, gone, manifest_path, entries)
        changes += [("forced", design) for design, _ in wanted.failing]
    return changes


DIRECTORY = "directory"
GENERATED_SUFFIXES = (".json", ".csv", ".md", ".txt", ".xlsx")   # every format a declared output can have


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _ours(path: Path, recorded: str) -> bool:
    """Does `path` hold exactly what the manifest says clusterplan wrote there (any of the hashes of an
    interrupted run)?"""
    if path.is_symlink() or not path.is_file():
        return False
    data = _read(path)
    return data is not None and _sha256(data) in recorded.split(",")


def _removable(path: Path, recorded: str) -> bool:
    """A listed path `outputs` may remove: a render directory (only the files its own manifest lists, as
    written, go) or a file of a generated format holding what clusterplan wrote (`_entry`: never under
    .git/)."""
    if recorded == DIRECTORY:
        return path.is_dir() and not path.is_symlink()
    return path.suffix.lower() in GENERATED_SUFFIXES and _ours(path, recorded) and _looks_generated(path)


def _looks_generated(path: Path) -> bool:
    """Is the file, by its content, a BOM or cabling plan clusterplan writes? A manifest is a file of the
    pull request and may list any path with its hash (README.md's is easy to compute): a file is removed
    only when it is a generated file too, so a manifest can never remove a document or a design."""
    data = _read(path) or b""
    suffix = path.suffix.lower()
    if suffix == ".xlsx":
        return data.startswith(b"PK") and b"<dc:creator>clusterplan</dc:creator>" in _core_properties(path)
    head = data[:4096].decode("utf-8", errors="replace")
    if suffix == ".json":
        try:
            value = json.loads(data)
        except ValueError:
            return False
        return isinstance(value, dict) and ("items" in value or "links" in value)
    if suffix == ".csv":
        return head.startswith(("category,part,description,", "fabric,a_site,"))
    if suffix == ".md":
        return head.startswith("# Bill of materials")
    return any(line.startswith("category ") for line in head.splitlines()[:4])     # .txt


def _core_properties(path: Path) -> bytes:
    import zipfile

    try:
        with zipfile.ZipFile(path) as book:
            return book.read("docProps/core.xml")[:4096]
    except (OSError, KeyError, zipfile.BadZipFile):
        return b""


def in_git_dir(path: Path | PurePosixPath) -> bool:
    return any(part.lower() == ".git" for part in path.parts)


def _refuse_foreign(base: Path, wanted: Plan, previous: dict[str, str]) -> None:
    """A declared output path that holds a file clusterplan did not write (or one changed since, or one
    that is not a clusterplan output by content: a manifest can list README.md with its true hash), a
    directory, a symlink or anything but a regular file is an error: nothing is overwritten."""
    for path in [*wanted.files, *wanted.sets]:
        directory = path in wanted.sets
        if not os.path.lexists(path):
            continue
        if os.path.islink(path) or (path.is_dir() != directory):
            kind = "a symlink" if os.path.islink(path) else "a directory" if path.is_dir() else "not a directory"
            raise ToolError(f"{display_name(path)} is {kind}; a declared output is written only as a "
                            f"{'directory' if directory else 'regular file'} (move it away or declare another path)")
        if not directory and _read(path) != wanted.files[path] and not (
                _ours(path, previous.get(_key(base, path), "")) and _looks_generated(path)):
            raise ToolError(f"{display_name(path)} exists and clusterplan did not write it (it is not in "
                            f"{OUTPUTS_MANIFEST}); move it away or declare another path")


def read_manifest_file(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in data["outputs"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _write_manifest(path: Path, entries: dict[str, str]) -> None:
    write_atomic(path, json.dumps({"generator": "clusterplan outputs", "version": 2,
                                   "outputs": dict(sorted(entries.items()))}, indent=1, sort_keys=True) + "\n")


def _write(wanted: Plan, intent: dict[str, str], gone: list[Path], manifest_path: Path,
           entries: dict[str, str]) -> None:
    """The manifest first lists every path this run may write (a kill leaves nothing unlisted), then the
    outputs, then the removals, then the manifest of what is there now."""
    _write_manifest(manifest_path, intent)
    for directory, files in wanted.sets.items():
        if not _set_is_current(directory, files):
            with OutputSet(directory) as out:
                for rel, data in files.items():
                    out.write(rel, data)
                out.commit()
    for path, data in wanted.files.items():
        if _read(path) != data:
            write_atomic(path, data)
    for path in gone:
        _remove(path)
    _write_manifest(manifest_path, entries)


def _remove(path: Path) -> None:
    """A file or render directory `outputs` wrote before and no longer produces; in a directory, only the
    files its manifest lists that still hold what was written (and the manifest), then the directories
    left empty. The manifests are files of the repository: a path they list must stay inside the
    directory, and a file is removed only when its content hash is the one recorded."""
    if path.is_dir() and not path.is_symlink():
        for rel, digest in read_manifest(path).items():
            try:
                entry = _entry(path, path, rel)
            except ToolError:
                continue
            if not in_git_dir(entry.relative_to(path)) and _ours(entry, digest):
                entry.unlink()
        (path / MANIFEST).unlink(missing_ok=True)
        for sub in sorted((Path(top) for top, _, _ in walk(path) if Path(top) != path), reverse=True):
            if not any(sub.iterdir()):
                sub.rmdir()
        if not any(path.iterdir()):
            path.rmdir()
    else:
        path.unlink(missing_ok=True)
