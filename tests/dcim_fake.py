"""Two in-memory DCIMs for fast tests of plan/apply/idempotency without a server (tests/test_dcim_live.py runs
the same steps against a real Nautobot):

- `FakeDcim` speaks the sync's Backend protocol (validator/workflows/dcim.py) directly, records by name;
- `FakeNautobotApi` speaks Nautobot's REST API as the real client (validator/workflows/dcim_nautobot.py) uses
  it, so the client's id mapping, paging and bulk writes run in the unit suite. It keeps to what Nautobot 3.2
  does and a test relies on: lists paged by `limit`/`offset` and filtered by `tags`/`name`, a reference read
  back at depth=0 as `{"id", "object_type", "url"}` and a choice as `{"value", "label"}`, bulk create/update/
  delete with a list body, a cable list filtered by `location_id` and `tags__n` (without the tag), a cable's
  create dropping the tags it is given (CableSerializer.create, Nautobot 3.2.7), an interface in at most one
  cable, unique names, and the GraphQL query the client reads interfaces with (choices as graphene's enum
  names). It refuses a read that asks for nested objects (depth > 0). It answers one request at a time (a lock),
as a database transaction would serialize them, so a client sending chunks from several threads is safe here.
"""

from __future__ import annotations

import itertools
import threading
import urllib.parse
from typing import Any

from validator.base.errors import ToolError
from validator.emit.dcim import natural_key
from validator.workflows.dcim_nautobot import ENDPOINTS, REFS, TAGGED, graphql_choice


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


KIND_OF = {endpoint: kind for kind, endpoint in ENDPOINTS.items()}
CHOICES = ("type", "face", "length_unit", "status")
UNIQUE = {"devices": ("name",), "interfaces": ("device", "name"), "racks": ("name",), "tags": ("name",)}


class FakeNautobotApi:
    """`transport` for `Nautobot(url, token, transport=api)`: method, path (after /api/), JSON body."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in ENDPOINTS}
        self.ids = itertools.count(1)
        self.taken: dict[tuple[Any, ...], str] = {}    # what no two objects may share -> the object that has it
        self.log: list[tuple[str, str, int]] = []      # method, kind, objects in the body
        self.lock = threading.Lock()

    def __call__(self, method: str, path: str, body: Any) -> Any:
        with self.lock:
            return self._answer(method, path, body)

    def _answer(self, method: str, path: str, body: Any) -> Any:
        route, _, query = path.partition("?")
        if route == "graphql/":
            return self._graphql(body)
        parts = route.strip("/").split("/")
        kind, obj_id = KIND_OF["/".join(parts[:2])], (parts[2] if len(parts) > 2 else None)
        self.log.append((method, kind, len(body) if isinstance(body, list) else int(body is not None)))
        if method == "GET":
            return self._get(kind, obj_id, urllib.parse.parse_qs(query))
        items = body if isinstance(body, list) else [body]
        if method == "POST":
            created = [self._create(kind, item) for item in items]
            return created if isinstance(body, list) else created[0]
        if method == "PATCH":
            return [self._patch(kind, item) for item in items]
        for item in items:
            for key in self._unique(kind, self.tables[kind].pop(item["id"])):
                del self.taken[key]
        return None

    def _get(self, kind: str, obj_id: str | None, query: dict[str, list[str]]) -> Any:
        if query.get("depth", ["0"]) != ["0"]:
            raise AssertionError(f"a read of {kind} asks for nested objects (depth={query['depth']})")
        if obj_id is not None:
            return self._out(kind, self.tables[kind][obj_id])
        rows = [o for o in self.tables[kind].values() if self._matches(o, query)
                and ("location_id" not in query or self._at(o, set(query["location_id"])))]
        limit, offset = int(query.get("limit", ["50"])[0]), int(query.get("offset", ["0"])[0])
        page = rows[offset:offset + limit]
        return {"count": len(rows), "next": "more" if offset + limit < len(rows) else None,
                "results": [self._out(kind, o) for o in page]}

    def _graphql(self, body: dict[str, Any]) -> Any:
        """The one query the client sends (GRAPHQL in the client): interfaces by tag, a page; a choice comes
        back as graphene's enum name, a reference as `{id}`."""
        if not body["query"].split("{", 1)[1].strip().startswith("interfaces(tags: $tags"):
            raise AssertionError(f"unexpected GraphQL query {body['query']!r}")
        v = body["variables"]
        self.log.append(("POST", "graphql", 1))
        rows = [o for o in self.tables["interfaces"].values() if self._matches(o, {"tags": v["tags"]})]
        return {"data": {"interfaces": [
            {"id": o["id"], "name": o["name"], "type": graphql_choice(o["type"]), "description": o["description"],
             "device": {"id": o["device"]}} for o in rows[v["offset"]:v["offset"] + v["limit"]]]}}

    def _matches(self, o: dict[str, Any], query: dict[str, list[str]]) -> bool:
        """Nautobot's filters `name`, `tags` (has the tag) and `tags__n` (has not)."""
        if "name" in query and o.get("name") not in query["name"]:
            return False
        tag_names = {self.tables["tags"][t]["name"] for t in o.get("tags", [])}
        return (("tags" not in query or bool(tag_names & set(query["tags"])))
                and not tag_names & set(query.get("tags__n", [])))

    def _at(self, cable: dict[str, Any], locations: set[str]) -> bool:
        """Nautobot's cable filter `location_id`: a device at either end stands at one of the locations."""
        ends = (self.tables["interfaces"].get(cable.get(f"termination_{s}_id", "")) for s in ("a", "b"))
        return any(e is not None and self.tables["devices"][e["device"]]["location"] in locations for e in ends)

    def _out(self, kind: str, o: dict[str, Any]) -> dict[str, Any]:
        """An object as the API returns it at depth=0: references as brief dicts, choices as value/label."""
        out = dict(o)
        for name, target in REFS.get(kind, {}).items():
            if out.get(name) is not None:
                out[name] = {"id": out[name], "object_type": f"dcim.{target}", "url": f"/api/{ENDPOINTS[target]}/"}
        for name in CHOICES:
            if name in out:
                out[name] = {"value": out[name], "label": out[name]} if out[name] else None
        return out

    def _check(self, kind: str, obj: dict[str, Any]) -> None:
        for name, target in REFS.get(kind, {}).items():
            if obj.get(name) is not None and obj[name] not in self.tables[target]:
                raise ToolError(f"HTTP 400: {kind} {name}: no {target} {obj[name]}")
        for key in self._unique(kind, obj):
            if self.taken.get(key, obj["id"]) != obj["id"]:
                raise ToolError(f"HTTP 400: {key} is taken (an interface in one cable, a name once)")

    def _unique(self, kind: str, obj: dict[str, Any]) -> list[tuple[Any, ...]]:
        """What no two objects may share: a name (of a device in its kind), an interface at a cable end."""
        if kind == "cables":
            return [("cabled", obj["termination_a_id"]), ("cabled", obj["termination_b_id"])]
        fields = UNIQUE.get(kind)
        return [(kind, *(obj.get(f) for f in fields))] if fields else []

    def _store(self, kind: str, obj: dict[str, Any]) -> None:
        old = self.tables[kind].pop(obj["id"], None)
        for key in self._unique(kind, old) if old else []:
            del self.taken[key]
        self._check(kind, obj)
        self.tables[kind][obj["id"]] = obj
        self.taken.update((key, obj["id"]) for key in self._unique(kind, obj))

    def _create(self, kind: str, item: dict[str, Any]) -> dict[str, Any]:
        obj = {**item, "id": f"{kind}-{next(self.ids)}"}
        if kind == "cables":
            obj.pop("tags", None)               # Nautobot 3.2's cable create drops the tags it is given
        if kind in TAGGED and obj.get("status") != "Planned":
            raise ToolError(f"HTTP 400: {kind} needs a status")
        self._store(kind, obj)
        return self._out(kind, obj)

    def _patch(self, kind: str, item: dict[str, Any]) -> dict[str, Any]:
        obj = {**self.tables[kind][item["id"]], **item}
        self._store(kind, obj)
        return self._out(kind, obj)

    def count(self, method: str, kind: str) -> int:
        """Requests made of one method on one kind."""
        return sum(1 for m, k, _ in self.log if m == method and k == kind)
