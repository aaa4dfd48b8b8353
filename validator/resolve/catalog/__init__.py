"""The hardware and model catalog: built-in YAML data files plus a design repository's own files."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from validator.base.errors import DesignError, Diagnostic
from validator.base.paths import OutsideRepository, confine, repository_root
from validator.read.loader import Loaded, load_yaml, read_text
from validator.resolve.catalog.entries import (
    ENTRY_TYPES,
    Cable,
    Facility,
    Gpu,
    LlmModel,
    Nic,
    Server,
    Switch,
    Transceiver,
)
from validator.resolve.compiled import builtin_data
from validator.resolve.trusted import construct

DATA_DIR = Path(__file__).resolve().parent / "data"
BUILTIN_FILES = ("gpus", "servers", "nics", "switches", "transceivers", "cables", "facility", "models")
CATALOG_VERSION = "2026.12.2"

E = TypeVar("E", bound=BaseModel)


@dataclass
class Catalog:
    """Entries by kind and id. `origin` says which file each entry came from (built-in or a path)."""

    entries: dict[str, dict[str, Any]] = field(default_factory=lambda: {k: {} for k in ENTRY_TYPES})
    origin: dict[tuple[str, str], str] = field(default_factory=dict)

    def get(self, kind: str, entry_id: str) -> Any:
        return self.entries[kind][entry_id]

    def find(self, kind: str, entry_id: str) -> Any | None:
        return self.entries[kind].get(entry_id)

    def suggest(self, kind: str, entry_id: str) -> str:
        close = difflib.get_close_matches(entry_id, list(self.entries[kind]), n=3, cutoff=0.5)
        if close:
            return "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        return f"`clusterplan catalog list {kind}` shows the {kind} ids"

    def gpu(self, i: str) -> Gpu:
        return self.entries["gpu"][i]  # type: ignore[no-any-return]

    def server(self, i: str) -> Server:
        return self.entries["server"][i]  # type: ignore[no-any-return]

    def nic(self, i: str) -> Nic:
        return self.entries["nic"][i]  # type: ignore[no-any-return]

    def switch(self, i: str) -> Switch:
        return self.entries["switch"][i]  # type: ignore[no-any-return]

    def transceiver(self, i: str) -> Transceiver:
        return self.entries["transceiver"][i]  # type: ignore[no-any-return]

    def cable(self, i: str) -> Cable:
        return self.entries["cable"][i]  # type: ignore[no-any-return]

    def facility(self, i: str) -> Facility:
        return self.entries["facility"][i]  # type: ignore[no-any-return]

    def model(self, i: str) -> LlmModel:
        return self.entries["model"][i]  # type: ignore[no-any-return]

    def merged(self, other: Catalog) -> Catalog:
        out = Catalog({k: {**v, **other.entries[k]} for k, v in self.entries.items()},
                      {**self.origin, **other.origin})
        return out


def parse_catalog_file(loaded: Loaded, trusted: bool = False) -> Catalog:
    """Validate one catalog file (`kind:` and `entries:`); raise DesignError with every problem.
    `trusted`: a built-in file, its entries built without validation (validator/resolve/trusted.py)."""
    data = loaded.data
    problems: list[Diagnostic] = []
    catalog = Catalog()
    if not isinstance(data, dict) or set(data) - {"kind", "entries"} or "kind" not in data:
        raise DesignError([Diagnostic("CAT001", "a catalog file is a mapping with `kind:` and `entries:`",
                                      loaded.file, hint=f"kind is one of {', '.join(ENTRY_TYPES)}")])
    kind = data["kind"]
    if kind not in ENTRY_TYPES:
        line, col = loaded.where(("kind",))
        close = difflib.get_close_matches(str(kind), list(ENTRY_TYPES), n=1)
        raise DesignError([Diagnostic("CAT001", f"unknown catalog kind {kind!r}", loaded.file, line, col,
                                      ("kind",), f"did you mean '{close[0]}'?" if close else
                                      f"use one of {', '.join(ENTRY_TYPES)}")])
    entries = data.get("entries") or []
    if not isinstance(entries, list):
        line, col = loaded.where(("entries",))
        raise DesignError([Diagnostic("CAT001", "`entries` must be a list", loaded.file, line, col)])
    model = ENTRY_TYPES[kind]
    for i, raw in enumerate(entries):
        try:
            entry = construct(model, raw) if trusted else model.model_validate(raw)
        except ValidationError as exc:
            for err in exc.errors():
                path = ("entries", i, *err["loc"])
                line, col = loaded.where(path)
                problems.append(Diagnostic("CAT002", f"{kind} entry {i}: {_field(err['loc'])}{err['msg']}",
                                           loaded.file, line, col, path, "see `clusterplan catalog show` of a "
                                           f"built-in {kind} for the fields"))
            continue
        if entry.id in catalog.entries[kind]:
            line, col = loaded.where(("entries", i, "id"))
            problems.append(Diagnostic("CAT003", f"duplicate {kind} id '{entry.id}' in this file",
                                       loaded.file, line, col, ("entries", i, "id"), "ids must be unique"))
        catalog.entries[kind][entry.id] = entry
        catalog.origin[(kind, entry.id)] = loaded.file
    if problems:
        raise DesignError(problems)
    return catalog


def _field(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc) + ": " if loc else ""


@cache
def builtin_catalog() -> Catalog:
    catalog = Catalog()
    for name in BUILTIN_FILES:
        loaded = Loaded(f"<builtin>/{name}.yaml", builtin_data(f"{name}.yaml"), "")
        catalog = catalog.merged(parse_catalog_file(loaded, trusted=True))
    for (kind, entry_id) in list(catalog.origin):
        catalog.origin[(kind, entry_id)] = "built-in"
    return catalog


def load_catalog(design_file: Path, display: str, extra: list[str], where: Any) -> Catalog:
    """The built-in catalog with the design's own catalog files layered on top, in order.

    `where(index)` gives the (line, col) of `catalogs[index]` in the design, for error messages.
    """
    catalog = builtin_catalog()
    if not extra:
        return catalog
    root = repository_root(design_file)
    problems: list[Diagnostic] = []
    for i, rel in enumerate(extra):
        line, col = where(i)
        try:
            real = confine(design_file.parent / rel, root, "catalog file")
        except OutsideRepository:
            problems.append(Diagnostic("CAT005", f"catalog file '{rel}' is outside the design repository",
                                       display, line, col, ("catalogs", i),
                                       "keep catalog files inside the design repository; symlinks out of "
                                       "it are not followed"))
            continue
        if not real.exists():
            problems.append(Diagnostic("CAT004", f"catalog file '{rel}' not found (or a symlink loop)", display,
                                       line, col, ("catalogs", i), "paths are relative to the design file"))
            continue
        shown = str(Path(display).parent / rel)
        try:
            loaded = load_yaml(read_text(real, shown), shown)
            catalog = catalog.merged(parse_catalog_file(loaded))     # a repository's file: validated
        except DesignError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise DesignError(problems)
    return catalog
