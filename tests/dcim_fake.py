"""An in-memory DCIM that speaks the sync's Backend protocol (validator/workflows/dcim.py), for fast tests of
plan/apply/idempotency without a server. tests/test_dcim_live.py runs the same steps against a real Nautobot."""

from __future__ import annotations

import itertools
from typing import Any

from validator.emit.dcim import natural_key
from validator.workflows.dcim_nautobot import TAGGED


class FakeDcim:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, tuple[tuple[str, ...], dict[str, Any], str | None]]] = {}
        self.ids = itertools.count(1)
        self.calls: list[tuple[str, str, int]] = []

    key = staticmethod(natural_key)

    def read(self, kind: str, tag: str) -> dict[tuple[str, ...], tuple[str, dict[str, Any]]]:
        self.calls.append(("read", kind, 0))
        return {key: (i, dict(rec)) for i, (key, rec, t) in self.rows.get(kind, {}).items()
                if kind not in TAGGED or t == tag}

    def create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None:
        self.calls.append(("create", kind, len(records)))
        table = self.rows.setdefault(kind, {})
        for r in records:
            table[str(next(self.ids))] = (self.key(kind, r), dict(r), tag if kind in TAGGED else None)

    def update(self, kind: str, changes: list[tuple[str, dict[str, Any]]]) -> None:
        self.calls.append(("update", kind, len(changes)))
        for i, fields in changes:
            key, rec, tag = self.rows[kind][i]
            self.rows[kind][i] = (key, {**rec, **fields}, tag)

    def delete(self, kind: str, ids: list[str]) -> None:
        self.calls.append(("delete", kind, len(ids)))
        for i in ids:
            del self.rows[kind][i]

    def move(self, kind: str, key: tuple[str, ...], **fields: Any) -> None:
        """Change a live object behind clusterplan's back (a technician moved a device)."""
        for i, (k, rec, tag) in self.rows[kind].items():
            if k == key:
                self.rows[kind][i] = (k, {**rec, **fields}, tag)
                return
        raise KeyError(key)
