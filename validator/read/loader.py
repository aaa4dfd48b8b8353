"""Stage 1: read a YAML file safely, keeping the line and column of every key and value.

PyYAML composes a node tree (no Python objects are ever constructed from tags); we then build plain
dicts, lists and scalars ourselves so that we can reject duplicate keys, bound alias expansion, and
record positions for every key path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

import yaml

from validator.base.errors import DesignError, Diagnostic, Path
from validator.base.limits import limits

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# YAML 1.1 (PyYAML) reads `1e30` as a string; YAML 1.2 and every user read it as a number.
_FLOAT_12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


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
    """Read a design file as UTF-8, refusing directories, huge files and undecodable bytes."""
    def fail(msg: str, hint: str) -> DesignError:
        return DesignError([Diagnostic("YAML000", msg, display, hint=hint)])

    if path.is_dir():
        raise fail("is a directory, not a design file", "pass the directory to `clusterplan validate`")
    size = path.stat().st_size
    if size > limits().max_file_bytes:
        raise fail(f"file is {size:,} bytes; the limit is {limits().max_file_bytes:,}",
                   "split the design or remove generated content")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DesignError([Diagnostic("YAML000", f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", display,
                                      line=line, hint="save the file as UTF-8")]) from None
    return text


def load_yaml(text: str, display: str) -> Loaded:
    """Parse one YAML document; raise DesignError with every duplicate key or a syntax error."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if problem == "could not find expected ':'" and exc.context and exc.context_mark:
            # "could not find expected ':'" is found a line late; the key that lacks it is the culprit
            problem += f" ({exc.context} that starts here)"
            mark = exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        hint = "YAML indentation must use spaces, not tabs" if "\t" in (
            text.splitlines()[line - 1] if 0 < line <= len(text.splitlines()) else "") else \
            "check indentation, colons and quotes on this line"
        raise DesignError([Diagnostic("YAML001", f"invalid YAML: {problem}", display, line, col, hint=hint)]) \
            from None
    except yaml.YAMLError as exc:
        raise DesignError([Diagnostic("YAML001", f"invalid YAML: {exc}", display,
                                      hint="the file must hold a single YAML document")]) from None
    loaded = Loaded(file=display, data=None, text=text)
    if node is None:
        raise DesignError([Diagnostic("YAML002", "the file is empty", display,
                                      hint="start from an example in designs/")])
    builder = _Builder(loaded)
    loaded.data = builder.build(node, ())
    if builder.problems:
        raise DesignError(builder.problems)
    return loaded


class _Builder:
    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.budget = limits().max_yaml_nodes
        self.problems: list[Diagnostic] = []

    def _pos(self, node: yaml.Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.budget -= 1
        if self.budget < 0:
            line, col = self._pos(node)
            raise DesignError([Diagnostic(
                "YAML003", f"the document expands to more than {limits().max_yaml_nodes:,} nodes "
                "(anchors and aliases repeated too often)", self.loaded.file, line, col,
                hint="remove the nested aliases; a design needs no more than a few thousand values")])
        self.loaded.values.setdefault(path, self._pos(node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return _scalar(node)

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
            key = _scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
            line, col = self._pos(key_node)
            if not isinstance(key, str | int | float | bool) or isinstance(key, bool):
                self.problems.append(Diagnostic("YAML004", "a mapping key must be a plain name",
                                                self.loaded.file, line, col, path, "quote the key"))
                continue
            key = str(key)
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
            return float(value)
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


def _int(text: str) -> int | str:
    cleaned = text.replace("_", "")
    try:
        if cleaned.lower().startswith(("0x", "-0x", "+0x")):
            return int(cleaned, 16)
        if cleaned.lower().startswith(("0o",)):
            return int(cleaned[2:], 8)
        return int(cleaned, 10)
    except ValueError:
        return text


def _float(text: str) -> float | str:
    cleaned = text.replace("_", "").lower()
    if cleaned in (".inf", "+.inf", "-.inf", ".nan"):
        return text  # not a usable quantity: let the schema reject it as a string
    try:
        return float(cleaned)
    except ValueError:
        return text
