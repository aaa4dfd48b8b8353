"""Sync a design into a live Nautobot (or a DCIM with its REST API): plan, apply, read back.

The wanted state is `validator.emit.dcim.dcim_objects` (records keyed by natural keys). The live state is
read through a `Backend`; `plan` compares the two kind by kind and field by field and returns the creates,
updates and deletes that would make the DCIM equal the design. Applying that plan twice changes nothing the
second time (idempotent). Deletes touch only objects carrying the design's own tag (`clusterplan-<site>`):
what clusterplan created for this design; shared objects (location types, manufacturers, device types,
roles) are created when missing and never updated or deleted.

Nothing here writes unless `apply` is called, and the command calls it only with `--apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from validator.emit.dcim import KINDS, STATUS, DcimObjects

SHARED = ("location_types", "manufacturers", "device_types", "roles")   # created when missing, never changed
# A live record the backend found without the design's tag but at the design's own place (a cable between two
# of the design's interfaces, left untagged by an interrupted apply) carries UNTAGGED: True. The plan adopts it
# when the design wants it (an update that sets TAG, the design's tag) and never deletes it otherwise.
UNTAGGED = "untagged"
TAG = "tag"


class Backend(Protocol):
    """What the sync needs of a DCIM: read every object of a kind (natural key -> id and fields, references
    as names), and create, update and delete in bulk. `validator.workflows.dcim_nautobot` is the real one."""

    def read(self, kind: str, tag: str) -> dict[tuple[str, ...], tuple[str, dict[str, Any]]]: ...
    def create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None: ...
    def update(self, kind: str, changes: list[tuple[str, dict[str, Any]]]) -> None: ...
    def delete(self, kind: str, ids: list[str]) -> None: ...


@dataclass
class Change:
    action: str                         # create, update, delete
    kind: str
    key: tuple[str, ...]
    fields: dict[str, Any] = field(default_factory=dict)     # create: the record; update: field -> (live, wanted)
    id: str | None = None

    def text(self) -> str:
        name = "/".join(self.key)
        if self.action == "update":
            what = ", ".join(f"{k}: {live!r} -> {want!r}" for k, (live, want) in sorted(self.fields.items()))
            return f"~ {self.kind} {name}: {what}"
        return f"{'+' if self.action == 'create' else '-'} {self.kind} {name}"


@dataclass
class Plan:
    site: str
    changes: list[Change]

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            out.setdefault(c.kind, {"create": 0, "update": 0, "delete": 0})[c.action] += 1
        return out

    @property
    def empty(self) -> bool:
        return not self.changes

    def text(self, limit: int = 200) -> str:
        lines = [f"DCIM plan for site {self.site}: " + ("no change" if self.empty else
                 f"{sum(c.action == 'create' for c in self.changes)} to create, "
                 f"{sum(c.action == 'update' for c in self.changes)} to update, "
                 f"{sum(c.action == 'delete' for c in self.changes)} to delete")]
        for kind, n in self.counts().items():
            lines.append(f"  {kind}: " + ", ".join(f"{v} {k}" for k, v in n.items() if v))
        lines += [f"  {c.text()}" for c in self.changes[:limit]]
        if len(self.changes) > limit:
            lines.append(f"  ... and {len(self.changes) - limit} more (--format json lists every change)")
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict[str, Any]:
        return {"version": 1, "site": self.site, "counts": self.counts(),
                "changes": [{"action": c.action, "kind": c.kind, "key": list(c.key),
                             "fields": {k: list(v) if c.action == "update" else v for k, v in c.fields.items()}}
                            for c in self.changes]}


def tag_of(site: str) -> str:
    return f"clusterplan-{site}"


def _comparable(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The fields compared with the live object (the ones a DCIM keeps as given)."""
    skip = {"content_types", "nestable"} if kind in SHARED else set()
    return {k: v for k, v in record.items() if k not in skip}


def plan(wanted: DcimObjects, backend: Backend) -> Plan:
    """The changes that make the DCIM hold exactly the design (for objects of the design's tag)."""
    tag = tag_of(wanted.site)
    changes: list[Change] = []
    deletes: list[Change] = []
    for kind in KINDS:
        live = backend.read(kind, tag)
        want = wanted.objects[kind]
        for key in sorted(want):
            if key not in live:
                changes.append(Change("create", kind, key, want[key]))
            elif kind not in SHARED:
                obj_id, have = live[key]
                diff = {k: (have.get(k), v) for k, v in _comparable(kind, want[key]).items() if have.get(k) != v}
                if have.get(UNTAGGED):
                    diff[TAG] = (None, tag)
                if diff:
                    changes.append(Change("update", kind, key, diff, obj_id))
        if kind not in SHARED:
            deletes += [Change("delete", kind, key, {}, live[key][0]) for key in sorted(set(live) - set(want))
                        if not live[key][1].get(UNTAGGED)]
    order = {k: i for i, k in enumerate(KINDS)}
    deletes.sort(key=lambda c: -order[c.kind])      # cables before interfaces before devices before racks
    return Plan(wanted.site, deletes + changes)


def apply(p: Plan, backend: Backend, progress: Callable[[str], None] = lambda _m: None) -> None:
    """Carry out a plan: deletes (dependents first), then creates and updates kind by kind in KINDS order."""
    tag = tag_of(p.site)
    for kind in reversed(KINDS):
        ids = [c.id for c in p.changes if c.kind == kind and c.action == "delete" and c.id]
        if ids:
            progress(f"delete {len(ids)} {kind}")
            backend.delete(kind, ids)
    for kind in KINDS:
        creates = [c.fields for c in p.changes if c.kind == kind and c.action == "create"]
        if creates:
            progress(f"create {len(creates)} {kind}")
            backend.create(kind, creates, tag)
        updates = [(c.id, {k: v[1] for k, v in c.fields.items()}) for c in p.changes
                   if c.kind == kind and c.action == "update" and c.id]
        if updates:
            progress(f"update {len(updates)} {kind}")
            backend.update(kind, updates)


def drift(wanted: DcimObjects, backend: Backend) -> list[str]:
    """What differs between the live DCIM and the design, in words (`clusterplan dcim diff`)."""
    out = []
    for c in plan(wanted, backend).changes:
        name = "/".join(c.key)
        if c.action == "create":
            out.append(f"missing in the DCIM: {c.kind} {name}")
        elif c.action == "delete":
            out.append(f"in the DCIM, not in the design: {c.kind} {name}")
        else:
            out += [f"differs: {c.kind} {name} {k}: DCIM {live!r}, design {want!r}"
                    for k, (live, want) in sorted(c.fields.items())]
    return out


def status_name() -> str:
    return STATUS


def chunks(items: list[Any], size: int) -> Iterable[list[Any]]:
    """`items` in lists of at most `size` (one bulk request each)."""
    for i in range(0, len(items), size):
        yield items[i:i + size]
