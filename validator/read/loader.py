"""Read a YAML file safely, keeping the line and column of every key and value.

PyYAML composes a node tree (no Python objects are ever constructed from tags); we then build plain
dicts, lists and scalars ourselves so that we can reject duplicate keys, bound alias expansion, and
record positions for every key path.
"""

from __future__ import annotations

import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

import yaml

from validator.base.errors import DesignError, Diagnostic, Path
from validator.base.limits import limits

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# YAML 1.1 (PyYAML) reads `1e30` as a string; YAML 1.2 and every user read it as a number.
_FLOAT_12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")
# Numbers must be finite: past the largest double, an integer cannot become one (each field's own
# range, in the schema, is far smaller; the schema names it).
MAX_NUMBER = sys.float_info.max


_NOT_REGULAR = "is not a regular file (a FIFO, socket or device is never read)"


@dataclass
class Loaded:
    """A parsed YAML document with the position of every value and key (1-based line, column)."""

    file: str
    data: Any
    text: str
    values: dict[Path, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Position of `path`, or of its nearest ancestor that exists in the file."""
        table = self.keys if key else self.values
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            if p in self.values:
                return self.values[p]
            p = p[:-1]
        return self.values.get((), (1, 1))

    def source_line(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


def read_text(path: FsPath, display: str) -> str:
    """Read a design, catalog or configuration file as UTF-8 (see `read_bytes`)."""
    raw = read_bytes(path, display)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DesignError([Diagnostic("YAML000", f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", display,
                                      line=line, hint="save the file as UTF-8")]) from None


def read_bytes(path: FsPath, display: str, limit: int | None = None) -> bytes:
    """The bytes of a file clusterplan is asked to read (at most `limit`, default the file limit).

    Only a regular file is read (a FIFO or a device could block forever or never end); it is opened
    without blocking, its size is checked before a byte is read, and no more than the limit is ever
    read even if the file grows meanwhile. Every problem is a DesignError (YAML000), never an OSError.
    A `limit` given by the caller reads the head of a larger file instead of refusing it.
    """
    def fail(msg: str, hint: str) -> DesignError:
        return DesignError([Diagnostic("YAML000", msg, display, hint=hint)])

    head = limit is not None
    limit = limits().max_file_bytes if limit is None else limit
    try:
        if path.is_dir():
            raise fail("is a directory, not a design file", "pass the directory to `clusterplan validate`")
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise fail(_NOT_REGULAR, "name a YAML file")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise fail(f"cannot read the file: {exc.strerror or exc}", "check the path and its permissions") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):   # replaced between the check and the open
            raise fail(_NOT_REGULAR, "name a YAML file")
        if info.st_size > limit and not head:
            raise fail(f"file is {info.st_size:,} bytes; the limit is {limit:,}",
                       "split the design or remove generated content")
        try:
            raw = fh.read(limit if head else limit + 1)
        except OSError as exc:
            raise fail(f"cannot read the file: {exc.strerror or exc}", "check the path and its permissions") \
                from None
    if len(raw) > limit:
        raise fail(f"file is over {limit:,} bytes, the limit", "split the design or remove generated content")
    return raw


def load_yaml(text: str, display: str) -> Loaded:
    """Parse one YAML document; raise DesignError with every duplicate key or a syntax error."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        raise DesignError([_syntax_problem(exc, text, display)]) from None
    except yaml.YAMLError as exc:
        raise DesignError([Diagnostic("YAML001", f"invalid YAML: {exc}", display,
                                      hint="the file must hold a single YAML document")]) from None
    except RecursionError:   # the pure-Python composer (no libyaml) on very deep nesting
        raise DesignError([Diagnostic("YAML006", "the document is nested too deeply to read", display,
                                      hint="a design nests a few levels; flatten the structure")]) from None
    loaded = Loaded(file=display, data=None, text=text)
    if node is None:
        raise DesignError([Diagnostic("YAML002", "the file is empty", display,
                                      hint="start from an example in designs/")])
    builder = _Builder(loaded)
    loaded.data = builder.build(node, ())
    if builder.problems:
        raise DesignError(builder.problems)
    return loaded


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, display: str) -> Diagnostic:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if problem == "could not find expected ':'" and exc.context and exc.context_mark:
        # "could not find expected ':'" is found a line late; the key that lacks it is the culprit
        problem += f" ({exc.context} that starts here)"
        mark = exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    lines = text.splitlines()
    hint = "YAML indentation must use spaces, not tabs" if "\t" in (
        lines[line - 1] if 0 < line <= len(lines) else "") else "check indentation, colons and quotes on this line"
    return Diagnostic("YAML001", f"invalid YAML: {problem}", display, line, col, hint=hint)


class _BadNumber(ValueError):
    """A scalar that reads as a number but is not a finite one within range."""


@dataclass
class _Built:
    """A collection node already built: its value (shared by every alias of it) and what it cost."""

    value: Any
    nodes: int        # nodes it expands to
    size: int         # bytes of keys and strings it expands to
    height: int       # levels of nesting inside it (1: no collection inside)
    aliases: int      # aliases nested inside it


class _Builder:
    """Builds plain values from the node tree within the limits of validator/data/limits.yaml: nodes and
    bytes of keys and strings (as if every alias were expanded), nesting depth and aliases nested in
    aliases. An alias to a node that contains it is refused, so recursion is impossible (each collection
    node on the current path is remembered). An alias is not built again: its value is shared and its
    cost charged at once, so an expansion bomb is refused in the time it takes to read the file."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.limits = limits()
        self.nodes = self.limits.max_yaml_nodes
        self.bytes = self.limits.max_yaml_bytes
        self.problems: list[Diagnostic] = []
        self.open: list[int] = []             # collection nodes being built (the current path)
        self.built: dict[int, _Built] = {}    # collection nodes built once: meeting one again is an alias
        self.inner: list[list[int]] = []      # [height, aliases] found so far inside each open node

    def _pos(self, node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def _stop(self, code: str, message: str, node: yaml.Node, hint: str, path: Path | None = None) -> DesignError:
        """The error, at the key that holds the offending alias when there is one (an alias node has no
        position of its own: it is the anchored node)."""
        line, col = self._pos(node)
        for i in range(len(path or ()), 0, -1):
            if (where := self.loaded.keys.get(tuple(path or ())[:i])) is not None:
                line, col = where
                break
        return DesignError([Diagnostic(code, message, self.loaded.file, line, col, tuple(path or ()), hint)])

    def _charge(self, nodes: int, size: int, node: yaml.Node, path: Path) -> None:
        self.nodes -= nodes
        self.bytes -= size
        if self.nodes < 0:
            raise self._stop("YAML003", f"the document expands to more than {self.limits.max_yaml_nodes:,} nodes "
                             "(anchors and aliases repeated too often)", node,
                             "remove the nested aliases; a design needs no more than a few thousand values", path)
        if self.bytes < 0:
            raise self._stop("YAML003", f"the document expands to more than {self.limits.max_yaml_bytes:,} bytes "
                             "of text (anchors and aliases repeated too often)", node,
                             "remove the aliases of long strings", path)

    def _deep(self, height: int, node: yaml.Node, path: Path) -> None:
        if len(self.open) + height > self.limits.max_yaml_depth:
            raise self._stop("YAML006", f"the document is nested more than {self.limits.max_yaml_depth} levels deep",
                             node, "a design nests a few levels; flatten the structure")

    def _note(self, height: int, aliases: int) -> None:
        """Tell the enclosing node how tall and how aliased what it holds is."""
        if self.inner:
            self.inner[-1][0] = max(self.inner[-1][0], height)
            self.inner[-1][1] = max(self.inner[-1][1], aliases)

    def build(self, node: yaml.Node, path: Path) -> Any:
        if not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            self._charge(1, 0, node, path)
            self.loaded.values.setdefault(path, self._pos(node))
            return self._scalar_at(node, path)
        key = id(node)
        if key in self.open:
            raise self._stop("YAML006", "an alias refers to a node that contains it (a recursive alias)", node,
                             "an anchor cannot be used inside itself; copy the values instead", path)
        if key in self.built:
            return self._alias(self.built[key], node, path)
        self._deep(1, node, path)
        self._charge(1, 0, node, path)
        self.loaded.values.setdefault(path, self._pos(node))
        nodes, size = self.nodes, self.bytes
        self.open.append(key)
        self.inner.append([0, 0])
        try:
            value = self._mapping(node, path) if isinstance(node, yaml.MappingNode) else \
                [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        finally:
            self.open.pop()
            height, aliases = self.inner.pop()
        self.built[key] = _Built(value, nodes - self.nodes + 1, size - self.bytes, height + 1, aliases)
        self._note(height + 1, aliases)
        return value

    def _alias(self, built: _Built, node: yaml.Node, path: Path) -> Any:
        if built.aliases + 1 > self.limits.max_alias_depth:
            raise self._stop("YAML006", f"aliases are nested more than {self.limits.max_alias_depth} deep", node,
                             "use an anchor directly rather than through aliases of aliases", path)
        self._deep(built.height, node, path)
        self._charge(built.nodes, built.size, node, path)
        self._note(built.height, built.aliases + 1)
        return built.value

    def _scalar_at(self, node: yaml.Node, path: Path) -> Any:
        try:
            value = _scalar(node)
        except _BadNumber as exc:
            line, col = self._pos(node)
            self.problems.append(Diagnostic("YAML007", str(exc), self.loaded.file, line, col, path,
                                            "write a finite number within range, without quotes or units"))
            return None
        if isinstance(value, str):
            self._charge(0, len(value), node, path)
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for src in sources:
                    value = self.build(src, path)
                    if isinstance(value, dict):
                        merged = {**value, **merged}
                continue
            line, col = self._pos(key_node)
            try:
                key = _scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
            except _BadNumber:
                key = None
            if not isinstance(key, str | int | float | bool) or isinstance(key, bool):
                self.problems.append(Diagnostic("YAML004", "a mapping key must be a plain name",
                                                self.loaded.file, line, col, path, "quote the key"))
                continue
            key = str(key)
            self._charge(0, len(key), key_node, path)
            if key in out:
                first = self.loaded.keys.get((*path, key), (line, col))
                self.problems.append(Diagnostic(
                    "YAML005", f"duplicate key '{key}' (first defined on line {first[0]})",
                    self.loaded.file, line, col, (*path, key),
                    "remove one of the two; YAML keeps only the last and silently drops the other"))
                continue
            self.loaded.keys[(*path, key)] = (line, col)
            out[key] = self.build(value_node, (*path, key))
        for key, value in merged.items():
            out.setdefault(key, value)
        return out


def _scalar(node: yaml.Node) -> Any:
    value = node.value
    tag = node.tag
    if tag == "tag:yaml.org,2002:str":
        if not getattr(node, "style", None) and _FLOAT_12.match(value):
            return _finite(float(value), value)
        return value
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return value.lower() in ("true", "yes", "on", "y")
    if tag == "tag:yaml.org,2002:int":
        return _int(value)
    if tag == "tag:yaml.org,2002:float":
        return _float(value)
    # timestamps and anything else stay text: dates are ISO strings to the schema.
    return value


def _out_of_range(text: str) -> _BadNumber:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return _BadNumber(f"{shown} is not a finite number")


def _finite(number: float, text: str) -> float:
    """A number a design can use: finite (its range is the schema's to check)."""
    if not math.isfinite(number) or abs(number) > MAX_NUMBER:
        raise _out_of_range(text)
    return number


def _int(text: str) -> int | str:
    cleaned = text.replace("_", "")
    try:
        if cleaned.lower().startswith(("0x", "-0x", "+0x")):
            number = int(cleaned, 16)
        elif cleaned.lower().startswith(("0o",)):
            number = int(cleaned[2:], 8)
        else:
            number = int(cleaned, 10)
    except ValueError:   # not a number after all, or more digits than Python converts
        if cleaned.lstrip("+-").isdigit():
            raise _out_of_range(text) from None
        return text
    if abs(number) > MAX_NUMBER:
        raise _out_of_range(text)
    return number


def _float(text: str) -> float | str:
    cleaned = text.replace("_", "").lower()
    if cleaned.lstrip("+-") in (".inf", ".nan"):
        raise _BadNumber(f"{text} is not a finite number")
    try:
        number = float(cleaned)
    except ValueError:   # a YAML 1.1 sexagesimal such as 1:30.5: text, as a ratio is
        return text
    return _finite(number, text)
