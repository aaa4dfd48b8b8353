"""Validate a SONiC config_db.json against the SONiC YANG models (tests/reference/sonic-yang, copied with its licence).

As the README beside the models says: convert config_db to RFC 7951 YANG JSON (each table under the
module whose top container holds a container of that name; `|`-separated keys onto the list whose key
count matches; inner key/value maps onto the nested list; values typed by their YANG leaf, 64-bit
integers as strings for libyang 2.x), then parse it with libyang in strict mode.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

YANG_DIR = Path(__file__).resolve().parent / "reference" / "sonic-yang"
_INT32 = {"int8", "int16", "int32", "uint8", "uint16", "uint32"}


@cache
def context() -> Any:
    import libyang

    ctx = libyang.Context(str(YANG_DIR))
    for path in sorted(YANG_DIR.glob("*.yang")):
        ctx.load_module(path.stem)
    return ctx


@cache
def _tables() -> dict[str, tuple[str, str, Any]]:
    """config_db table -> (module name, top container name, table container node)."""
    out = {}
    for module in context():
        for top in module.children():
            if top.keyword() != "container":
                continue
            for table in top.children():
                if table.keyword() == "container":
                    out.setdefault(table.name(), (module.name(), top.name(), table))
    return out


def _typed(leaf: Any, value: str) -> Any:
    base = leaf.type().basename()
    if base in _INT32:
        return int(value)
    if base == "boolean":
        return value == "true"
    if base == "union":
        return value
    return value


def _entry(node: Any, fields: dict[str, str]) -> dict[str, Any]:
    leaves = {c.name(): c for c in node.children() if c.keyword() in ("leaf", "leaf-list")}
    nested = [c for c in node.children() if c.keyword() == "list"]
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key in leaves:
            leaf = leaves[key]
            out[key] = [_typed(leaf, v) for v in value.split(",")] if leaf.keyword() == "leaf-list" else \
                _typed(leaf, value)
        elif nested:  # a map table: each pair becomes an entry of the nested key/value list
            inner = nested[0]
            k_leaf, v_leaf = [c for c in inner.children() if c.keyword() == "leaf"][:2]
            out.setdefault(inner.name(), []).append({k_leaf.name(): _typed(k_leaf, key),
                                                     v_leaf.name(): _typed(v_leaf, value)})
        else:
            raise KeyError(f"{node.name()}: no YANG leaf for field {key!r}")
    return out


def to_rfc7951(config: dict[str, dict[str, dict[str, str]]]) -> dict[str, Any]:
    tables = _tables()
    doc: dict[str, Any] = {}
    for table, rows in config.items():
        if table not in tables:
            raise KeyError(f"no YANG model holds table {table}")
        module, top, node = tables[table]
        body: dict[str, Any] = {}
        lists = [c for c in node.children() if c.keyword() == "list"]
        containers = {c.name(): c for c in node.children() if c.keyword() == "container"}
        for key, fields in rows.items():
            if key in containers:
                body[key] = _entry(containers[key], fields)
                continue
            parts = key.split("|")
            target = next((lst for lst in lists if len(list(lst.keys())) == len(parts)), None)
            if target is None:
                raise KeyError(f"{table}: no list with {len(parts)} key(s) for {key!r}")
            entry = {k.name(): _typed(k, v) for k, v in zip(target.keys(), parts, strict=True)}
            entry.update(_entry(target, fields))
            body.setdefault(target.name(), []).append(entry)
        doc[f"{module}:{top}"] = {**doc.get(f"{module}:{top}", {}), table: body}
    return doc


def validate(config: dict[str, Any]) -> None:
    """Raise if the configuration does not validate against the SONiC YANG models."""
    data = json.dumps(to_rfc7951(config))
    tree = context().parse_data_mem(data, "json", strict=True, validate_present=True, no_state=True)
    if tree is not None:
        tree.free()
