"""Nautobot's REST API as a `Backend` of the DCIM sync (validator/workflows/dcim.py).

Plain HTTPS with the standard library: the token comes from the environment (never from a design), TLS is
verified unless the caller turns it off explicitly. Reads are cheap: `depth=0` (a reference is its id, not
the nested object) and `exclude_m2m=true`, in pages of `page` objects; each reference id is mapped to the
name of the object it names from the kinds read before it (KINDS order: locations before racks before
devices before interfaces before cables), and an id not read yet (an object of someone else's) is fetched
once. Writes go in bulk, `chunk` objects per request, `workers` requests in flight at once (the server saves
each request's objects one by one, so a second request lets a second server process work), references sent as
ids. The read-back records hold the
fields clusterplan writes with references as names, so the sync compares like with like. The page, chunk
timeout and workers are policies with their reasons in validator/data/dcim.yaml.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from validator.base.errors import ToolError
from validator.base.facts import fact
from validator.base.tables import values
from validator.emit.dcim import IFACE_TYPES, STATUS, natural_key
from validator.workflows.dcim import TAG, UNTAGGED, chunks

ENDPOINTS = {
    "tags": "extras/tags", "statuses": "extras/statuses", "location_types": "dcim/location-types",
    "locations": "dcim/locations", "manufacturers": "dcim/manufacturers", "device_types": "dcim/device-types",
    "roles": "extras/roles", "racks": "dcim/racks", "devices": "dcim/devices", "interfaces": "dcim/interfaces",
    "cables": "dcim/cables", "power_panels": "dcim/power-panels", "power_feeds": "dcim/power-feeds",
}
TAGGED = ("locations", "racks", "devices", "interfaces", "cables", "power_panels", "power_feeds")
CONTENT_TYPES = ["dcim.location", "dcim.rack", "dcim.device", "dcim.interface", "dcim.cable", "dcim.powerpanel",
                 "dcim.powerfeed"]
# The references of each kind: field -> the kind of object it names (an id on the wire, a name in a record).
REFS: dict[str, dict[str, str]] = {
    "location_types": {"parent": "location_types"},
    "locations": {"location_type": "location_types", "parent": "locations"},
    "device_types": {"manufacturer": "manufacturers"},
    "racks": {"location": "locations"},
    "devices": {"device_type": "device_types", "role": "roles", "location": "locations", "rack": "racks"},
    "interfaces": {"device": "devices"},
    "power_panels": {"location": "locations"},
    "power_feeds": {"power_panel": "power_panels", "rack": "racks"},
}
# The plain fields of each kind as read back (a choice as its value), and what an empty one reads as.
FIELDS: dict[str, tuple[str, ...]] = {
    "location_types": ("name",), "locations": ("name",), "manufacturers": ("name",),
    "device_types": ("model", "u_height"), "roles": ("name",), "racks": ("name", "u_height", "comments"),
    "devices": ("name", "position", "face"), "interfaces": ("name", "type", "description"),
    "cables": ("label", "type", "length", "length_unit"), "power_panels": ("name",),
    "power_feeds": ("name", "comments"),
}
EMPTY: dict[str, Any] = {"comments": "", "description": "", "label": "", "face": None, "length_unit": "m"}
CABLE_ENDS = ("a_device", "a_interface", "z_device", "z_interface")
READ = {"depth": 0, "exclude_m2m": "true"}
# The same on a write: its response (only the ids are used) skips the many-to-many lists (a cable's terminations,
# every object's tags: write-only then, still set from the body; OptInFieldsMixin, Nautobot 3.2.7), about 8 % of
# a cable's create on the test server (docs/dcim.md).
WRITE = "?" + urllib.parse.urlencode(READ)
# Interfaces are read through GraphQL, asking for exactly these fields: their REST list computes each
# interface's cable peer and connected endpoint (several queries per interface, even at depth=0).
GRAPHQL = {"interfaces": "interfaces(tags: $tags, limit: $limit, offset: $offset) "
                         "{ id name type description device { id } }"}


def graphql_choice(value: str) -> str:
    """A choice value as Nautobot's GraphQL names it (graphene's enum name: `400gbase-x-osfp` ->
    `A_400GBASE_X_OSFP`)."""
    name = re.sub(r"[\W|^]+", "_", value).upper()
    return f"A_{name}" if name[:1].isdigit() else name


FROM_GRAPHQL = {graphql_choice(v): v for v in (*IFACE_TYPES.values(), "other")}


@fact
class Settings:
    """The client's policies (validator/data/dcim.yaml, each with its reason)."""

    page: int
    chunk: int
    timeout_s: float
    workers: int


def settings() -> Settings:
    table = values("dcim.yaml", "nautobot")
    return Settings(int(table["page"]), int(table["chunk"]), float(table["timeout_s"]), int(table["workers"]))


def _value(choice: Any) -> Any:
    return choice.get("value") if isinstance(choice, dict) else choice


def _plain(kind: str, name: str, raw: Any) -> Any:
    value = _value(raw)
    if name == "type" and kind == "cables":
        return value or ""
    if name == "type" and kind == "interfaces":
        return FROM_GRAPHQL.get(value, value)
    return value if value not in (None, "") or name not in EMPTY else EMPTY[name]


Transport = Callable[[str, str, Any], Any]


class Nautobot:
    def __init__(self, url: str, token: str, verify_tls: bool = True, transport: Transport | None = None) -> None:
        if not url.startswith(("https://", "http://")):
            raise ToolError(f"NAUTOBOT_URL must start with https:// (or http:// for a local test server): {url!r}")
        self.base = url.rstrip("/") + "/api/"
        self.token = token
        self.settings = settings()
        self.context = ssl.create_default_context() if verify_tls else ssl._create_unverified_context()
        self.transport = transport or self._http
        self.ids: dict[str, dict[tuple[str, ...], str]] = {}     # kind -> natural key -> id
        self.keys: dict[str, dict[str, tuple[str, ...]]] = {}    # kind -> id -> natural key
        self.by_name: dict[str, dict[Any, str]] = {}             # kind -> the name a reference gives -> id
        self.tag_id: str | None = None
        self.requests = 0
        self._count = threading.Lock()

    # -- HTTP --------------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None) -> Any:
        with self._count:
            self.requests += 1
        return self.transport(method, path, body)

    def _each(self, parts: list[Any], send: Callable[[Any], Any]) -> list[Any]:
        """`send(part)` for every part, `workers` requests in flight at once; the answers in the parts' order.
        After a failure the parts not yet sent are not sent (the `workers` - 1 others in flight finish)."""
        if self.settings.workers <= 1 or len(parts) <= 1:
            return [send(part) for part in parts]
        failed = threading.Event()

        def guarded(part: Any) -> Any:
            if failed.is_set():      # an earlier part failed: its error is raised below, in the parts' order
                return None
            try:
                return send(part)
            except BaseException:
                failed.set()
                raise

        with ThreadPoolExecutor(max_workers=self.settings.workers) as pool:
            futures = [pool.submit(guarded, part) for part in parts]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise

    def _http(self, method: str, path: str, body: Any) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Token {self.token}", "Accept": "application/json",
            "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.settings.timeout_s, context=self.context) as resp:
                text = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")[:2000]
            raise ToolError(f"Nautobot {method} {path}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise ToolError(f"Nautobot at {self.base}: {getattr(exc, 'reason', exc)}") from None
        return json.loads(text) if text else None

    def all(self, kind: str, **query: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        params = {"limit": self.settings.page, **READ, **query}
        while True:
            query_string = urllib.parse.urlencode({**params, "offset": len(out)}, doseq=True)
            page = self.request("GET", f"{ENDPOINTS[kind]}/?{query_string}", None)
            out += page["results"]
            if not page.get("next") or not page["results"]:
                return out

    def graphql_all(self, kind: str, tag: str) -> list[dict[str, Any]]:
        """Every object of `kind` with the tag, through GraphQL (GRAPHQL: the fields asked), page by page."""
        out: list[dict[str, Any]] = []
        query = f"query ($tags: [String], $limit: Int, $offset: Int) {{ {GRAPHQL[kind]} }}"
        while True:
            variables = {"tags": [tag], "limit": self.settings.page, "offset": len(out)}
            answer = self.request("POST", "graphql/", {"query": query, "variables": variables})
            if answer.get("errors"):
                raise ToolError(f"Nautobot GraphQL {kind}: {json.dumps(answer['errors'])[:2000]}")
            rows = answer["data"][kind]
            out += rows
            if len(rows) < self.settings.page:
                return out

    def version(self) -> str:
        return str(self.request("GET", "status/", None).get("nautobot-version", "unknown"))

    # -- names and ids -----------------------------------------------------------------------------------
    def _remember(self, kind: str, key: tuple[str, ...], obj_id: str) -> None:
        self.ids.setdefault(kind, {})[key] = obj_id
        self.keys.setdefault(kind, {})[obj_id] = key
        self.by_name.setdefault(kind, {})[key if kind == "interfaces" else key[-1]] = obj_id

    def _ref(self, kind: str, ref: Any) -> Any:
        """The name a reference gives (an interface: its device and name): from what was read, else fetched."""
        if ref is None:
            return None
        obj_id = str(ref.get("id") if isinstance(ref, dict) else ref)
        key = self.keys.get(kind, {}).get(obj_id)
        if key is None:
            key, _ = self._record(kind, self.request("GET", f"{ENDPOINTS[kind]}/{obj_id}/?"
                                                     f"{urllib.parse.urlencode(READ)}", None))
            if key is None:
                return obj_id
            self._remember(kind, key, obj_id)
        return key if kind == "interfaces" else key[-1]

    def _id(self, kind: str, name: Any) -> str:
        try:
            return self.by_name[kind][name]
        except KeyError:
            raise ToolError(f"Nautobot: no {kind} {name!r} to refer to (read or created before)") from None

    def _record(self, kind: str, o: dict[str, Any]) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
        """A live object as the record clusterplan writes: its plain fields, references as names."""
        record = {name: _plain(kind, name, o.get(name)) for name in FIELDS[kind]}
        for name, target in REFS.get(kind, {}).items():
            record[name] = self._ref(target, o.get(name))
        if kind == "cables":
            ends = [self._ref("interfaces", o.get(f"termination_{s}_id"))
                    if o.get(f"termination_{s}_type") == "dcim.interface" else None for s in ("a", "b")]
            pair = sorted(e for e in ends if isinstance(e, tuple))
            if len(pair) != 2:
                return None, {}         # a cable to something other than two interfaces: not clusterplan's
            a, z = pair
            record.update(zip(CABLE_ENDS, (*a, *z), strict=True))
        return natural_key(kind, record), record

    # -- the Backend protocol ----------------------------------------------------------------------------
    def _find_tag(self, tag: str) -> str | None:
        if self.tag_id is None:
            found = self.all("tags", name=tag)
            self.tag_id = str(found[0]["id"]) if found else None
        return self.tag_id

    def ensure_tag(self, tag: str) -> str:
        found = self._find_tag(tag)
        if found is not None:
            return found
        self.tag_id = str(self.request("POST", "extras/tags/", {"name": tag, "content_types": CONTENT_TYPES})["id"])
        return self.tag_id

    def read(self, kind: str, tag: str) -> dict[tuple[str, ...], tuple[str, dict[str, Any]]]:
        if kind in TAGGED and self._find_tag(tag) is None:
            return {}           # nothing carries the design's tag yet: a first sync
        out: dict[tuple[str, ...], tuple[str, dict[str, Any]]] = {}
        objects = (self.graphql_all(kind, tag) if kind in GRAPHQL else self.all(kind, tags=tag) if kind in TAGGED
                   else self.all(kind))
        if kind == "cables":
            objects += self._untagged_cables(tag)
        for o in objects:
            key, record = self._record(kind, o)
            if key is not None:
                out[key] = (str(o["id"]), {**record, UNTAGGED: True} if o.get(UNTAGGED) else record)
                self._remember(kind, key, str(o["id"]))
        return out

    def _untagged_cables(self, tag: str) -> list[dict[str, Any]]:
        """Cables at the design's locations without its tag whose two ends are both interfaces of the design
        (read just before): an apply interrupted between a cable chunk's create and its tag PATCH (see _create)
        leaves them; the plan adopts them (tags them) instead of creating them again, which Nautobot refuses."""
        places, mine = list(self.ids.get("locations", {}).values()), self.keys.get("interfaces", {})
        if not places or not mine:
            return []
        found = self.all("cables", location_id=places, tags__n=tag)
        return [{**o, UNTAGGED: True} for o in found
                if str(o.get("termination_a_id")) in mine and str(o.get("termination_b_id")) in mine]

    def _payload(self, kind: str, r: dict[str, Any]) -> dict[str, Any]:
        """A record with its references as ids (as the API takes them), plus status where the model has one."""
        refs = REFS.get(kind, {})
        body = {k: (self._id(refs[k], v) if v is not None else None) if k in refs else v
                for k, v in r.items() if not (kind == "cables" and k in CABLE_ENDS)}
        if kind == "cables" and "a_device" in r:
            body.update({"termination_a_type": "dcim.interface", "termination_b_type": "dcim.interface",
                         "termination_a_id": self._id("interfaces", (r["a_device"], r["a_interface"])),
                         "termination_b_id": self._id("interfaces", (r["z_device"], r["z_interface"]))})
        if kind == "cables" and not body.get("type"):
            body.pop("type", None)
        if kind == "power_feeds" and body.get("rack") is None:
            body.pop("rack", None)
        return body

    def create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None:
        if kind in ("location_types", "locations"):     # a tree: parents first, a level at a time
            todo = list(records)
            while todo:
                known = self.by_name.get(kind, {})
                level = [r for r in todo if r.get("parent") is None or r["parent"] in known]
                if not level:
                    raise ToolError(f"{kind}: parents missing for {[r['name'] for r in todo][:5]}")
                self._create(kind, level, tag)
                todo = [r for r in todo if r not in level]
            return
        self._create(kind, records, tag)

    def _create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None:
        extra: dict[str, Any] = {"status": STATUS, "tags": [self.ensure_tag(tag)]} if kind in TAGGED else {}
        parts = list(chunks(records, self.settings.chunk))
        bodies = [[{**self._payload(kind, r), **extra} for r in part] for part in parts]

        def send(body: list[dict[str, Any]]) -> Any:
            created = self.request("POST", f"{ENDPOINTS[kind]}/{WRITE}", body)
            if extra and kind == "cables":     # Nautobot's cable create drops the tags it is given: set them after
                self.request("PATCH", f"{ENDPOINTS[kind]}/{WRITE}", [{"id": o["id"], "tags": extra["tags"]}
                                                                     for o in created])
            return created

        for part, created in zip(parts, self._each(bodies, send), strict=True):
            for r, o in zip(part, created, strict=True):
                self._remember(kind, natural_key(kind, r), str(o["id"]))

    def update(self, kind: str, changes: list[tuple[str, dict[str, Any]]]) -> None:
        bodies = [[{"id": i, **self._payload(kind, {k: v for k, v in fields.items() if k != TAG}),
                    **({"tags": [self.ensure_tag(fields[TAG])]} if TAG in fields else {})} for i, fields in part]
                  for part in chunks(changes, self.settings.chunk)]
        self._each(bodies, lambda body: self.request("PATCH", f"{ENDPOINTS[kind]}/{WRITE}", body))

    def delete(self, kind: str, ids: list[str]) -> None:
        self._each([[{"id": i} for i in part] for part in chunks(ids, self.settings.chunk)],
                   lambda body: self.request("DELETE", f"{ENDPOINTS[kind]}/", body))
