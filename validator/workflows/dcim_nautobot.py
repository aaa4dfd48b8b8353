"""Nautobot's REST API as a `Backend` of the DCIM sync (validator/workflows/dcim.py).

Plain HTTPS with the standard library: the token comes from the environment (never from a design), TLS is
verified unless the caller turns it off explicitly, lists are read in pages of `PAGE` objects and writes go in
bulk (a list per request). References are sent as ids, resolved from names this backend has read or created;
objects are read back with `depth=1` and reduced to the fields clusterplan writes, with references as names,
so the sync compares like with like.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from validator.base.errors import ToolError
from validator.emit.dcim import STATUS, natural_key
from validator.workflows.dcim import chunks

PAGE = 1000
ENDPOINTS = {
    "tags": "extras/tags", "statuses": "extras/statuses", "location_types": "dcim/location-types",
    "locations": "dcim/locations", "manufacturers": "dcim/manufacturers", "device_types": "dcim/device-types",
    "roles": "extras/roles", "racks": "dcim/racks", "devices": "dcim/devices", "interfaces": "dcim/interfaces",
    "cables": "dcim/cables", "power_panels": "dcim/power-panels", "power_feeds": "dcim/power-feeds",
}
TAGGED = ("locations", "racks", "devices", "interfaces", "cables", "power_panels", "power_feeds")
CONTENT_TYPES = ["dcim.location", "dcim.rack", "dcim.device", "dcim.interface", "dcim.cable", "dcim.powerpanel",
                 "dcim.powerfeed"]


def _name(ref: Any, field: str = "name") -> Any:
    return ref.get(field) if isinstance(ref, dict) else ref


def _value(choice: Any) -> Any:
    return choice.get("value") if isinstance(choice, dict) else choice


class Nautobot:
    def __init__(self, url: str, token: str, verify_tls: bool = True, timeout: float = 900) -> None:
        if not url.startswith(("https://", "http://")):
            raise ToolError(f"NAUTOBOT_URL must start with https:// (or http:// for a local test server): {url!r}")
        self.base = url.rstrip("/") + "/api/"
        self.token = token
        self.timeout = timeout
        self.context = ssl.create_default_context() if verify_tls else ssl._create_unverified_context()
        self.ids: dict[str, dict[Any, str]] = {}         # kind -> natural key -> id
        self.iface_key: dict[str, tuple[str, str]] = {}  # interface id -> (device, name)
        self.tag_id: str | None = None

    # -- HTTP --------------------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Token {self.token}", "Accept": "application/json",
            "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.context) as resp:
                text = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")[:2000]
            raise ToolError(f"Nautobot {method} {path}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise ToolError(f"Nautobot at {self.base}: {getattr(exc, 'reason', exc)}") from None
        return json.loads(text) if text else None

    def all(self, kind: str, **query: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        params = {"limit": PAGE, "depth": 1, **query}
        offset = 0
        while True:
            page = self.request("GET", f"{ENDPOINTS[kind]}/?{urllib.parse.urlencode({**params, 'offset': offset})}")
            out += page["results"]
            offset += len(page["results"])
            if not page.get("next") or not page["results"]:
                return out

    def version(self) -> str:
        return str(self.request("GET", "status/").get("nautobot-version", "unknown"))

    # -- the Backend protocol ----------------------------------------------------------------------------
    def ensure_tag(self, tag: str) -> str:
        if self.tag_id is None:
            found = self.all("tags", name=tag)
            if found:
                self.tag_id = str(found[0]["id"])
            else:
                body = {"name": tag, "content_types": CONTENT_TYPES}
                self.tag_id = str(self.request("POST", "extras/tags/", body)["id"])
        return self.tag_id

    def tag_exists(self, tag: str) -> bool:
        if self.tag_id is None:
            found = self.all("tags", name=tag)
            if not found:
                return False
            self.tag_id = str(found[0]["id"])
        return True

    def read(self, kind: str, tag: str) -> dict[tuple[str, ...], tuple[str, dict[str, Any]]]:
        if kind in TAGGED and not self.tag_exists(tag):
            return {}           # nothing carries the design's tag yet: a first sync
        objects = self.all(kind, tags=tag) if kind in TAGGED else self.all(kind)
        out: dict[tuple[str, ...], tuple[str, dict[str, Any]]] = {}
        for o in objects:
            key, record = self._record(kind, o)
            if key is None:
                continue
            out[key] = (str(o["id"]), record)
            self.ids.setdefault(kind, {})[key] = str(o["id"])
        return out

    def _record(self, kind: str, o: dict[str, Any]) -> tuple[tuple[str, ...] | None, dict[str, Any]]:
        if kind == "location_types":
            return (o["name"],), {"name": o["name"], "parent": _name(o.get("parent"))}
        if kind == "locations":
            return (o["name"],), {"name": o["name"], "location_type": _name(o["location_type"]),
                                  "parent": _name(o.get("parent"))}
        if kind == "manufacturers":
            return (o["name"],), {"name": o["name"]}
        if kind == "device_types":
            return (_name(o["manufacturer"]), o["model"]), {"manufacturer": _name(o["manufacturer"]),
                                                            "model": o["model"], "u_height": o["u_height"]}
        if kind == "roles":
            return (o["name"],), {"name": o["name"]}
        if kind == "racks":
            return (o["name"],), {"name": o["name"], "location": _name(o["location"]), "u_height": o["u_height"],
                                  "comments": o.get("comments", "")}
        if kind == "devices":
            return (o["name"],), {"name": o["name"], "device_type": _name(o["device_type"], "model"),
                                  "role": _name(o["role"]), "location": _name(o["location"]),
                                  "rack": _name(o.get("rack")), "position": o.get("position"),
                                  "face": _value(o.get("face")) or None}
        if kind == "interfaces":
            device = _name(o["device"])
            self.iface_key[str(o["id"])] = (device, o["name"])
            return (device, o["name"]), {"device": device, "name": o["name"], "type": _value(o["type"]),
                                         "description": o.get("description", "")}
        if kind == "cables":
            ends = [self.iface_key.get(str(_name(o.get(f"termination_{s}_id") or o.get(f"termination_{s}"), "id")))
                    for s in ("a", "b")]
            if None in ends:
                return None, {}
            a, z = sorted(e for e in ends if e is not None)
            return (*a, *z), {"a_device": a[0], "a_interface": a[1], "z_device": z[0], "z_interface": z[1],
                              "label": o.get("label", ""), "type": _value(o.get("type")) or "",
                              "length": o.get("length"), "length_unit": _value(o.get("length_unit")) or "m"}
        if kind == "power_panels":
            return (o["name"],), {"name": o["name"], "location": _name(o["location"])}
        if kind == "power_feeds":
            panel = _name(o["power_panel"])
            return (panel, o["name"]), {"name": o["name"], "power_panel": panel, "rack": _name(o.get("rack")),
                                        "comments": o.get("comments", "")}
        raise ValueError(kind)

    def _payload(self, kind: str, r: dict[str, Any]) -> dict[str, Any]:
        """A record with its references as ids (as the API takes them), plus status where the model has one."""
        ref = {"location_type": "location_types", "location": "locations", "manufacturer": "manufacturers",
               "role": "roles", "rack": "racks", "power_panel": "power_panels"}
        body: dict[str, Any] = {}
        for k, v in r.items():
            if k == "parent":
                table = "location_types" if kind == "location_types" else "locations"
                body[k] = None if v is None else self.ids[table][(v,)]
            elif k in ref and v is not None:
                body[k] = self.ids[ref[k]][(v,)]
            elif k == "device_type":
                body[k] = next(i for (m, model), i in self.ids["device_types"].items() if model == v)
            elif k == "device" and kind == "interfaces":
                body[k] = self.ids["devices"][(v,)]
            elif kind == "cables" and k in ("a_device", "a_interface", "z_device", "z_interface"):
                continue
            elif kind in ("roles", "location_types") and k == "content_types":
                body[k] = v
            elif k == "manufacturer" and kind == "device_types":
                body[k] = self.ids["manufacturers"][(v,)]
            else:
                body[k] = v
        if kind == "cables":
            body.update({"termination_a_type": "dcim.interface", "termination_b_type": "dcim.interface",
                         "termination_a_id": self.ids["interfaces"][(r["a_device"], r["a_interface"])],
                         "termination_b_id": self.ids["interfaces"][(r["z_device"], r["z_interface"])]})
            if not body.get("type"):
                body.pop("type", None)
        if kind in TAGGED or kind in ("racks",):
            body["status"] = STATUS
        if kind == "power_feeds" and body.get("rack") is None:
            body.pop("rack", None)
        return body

    def create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None:
        if kind in ("location_types", "locations"):     # a tree: parents first, a level at a time
            todo = list(records)
            while todo:
                known = self.ids.get(kind, {})
                level = [r for r in todo if r.get("parent") is None or (r["parent"],) in known]
                if not level:
                    raise ToolError(f"{kind}: parents missing for {[r['name'] for r in todo][:5]}")
                self._create(kind, level, tag)
                todo = [r for r in todo if r not in level]
            return
        self._create(kind, records, tag)

    def _create(self, kind: str, records: list[dict[str, Any]], tag: str) -> None:
        tag_id = self.ensure_tag(tag) if kind in TAGGED else None
        for part in chunks(records):
            bodies = [{**self._payload(kind, r), **({"tags": [tag_id]} if tag_id else {})} for r in part]
            created = self.request("POST", f"{ENDPOINTS[kind]}/", bodies)
            if tag_id and kind == "cables":     # Nautobot's cable create drops the tags it is given: set them after
                self.request("PATCH", f"{ENDPOINTS[kind]}/", [{"id": o["id"], "tags": [tag_id]} for o in created])
            for r, o in zip(part, created, strict=True):
                self.ids.setdefault(kind, {})[natural_key(kind, r)] = str(o["id"])
                if kind == "interfaces":
                    self.iface_key[str(o["id"])] = (r["device"], r["name"])

    def update(self, kind: str, changes: list[tuple[str, dict[str, Any]]]) -> None:
        for part in chunks(changes):
            self.request("PATCH", f"{ENDPOINTS[kind]}/",
                         [{"id": i, **self._partial(kind, fields)} for i, fields in part])

    def _partial(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        body = self._payload(kind, fields) if kind != "cables" else {
            k: v for k, v in fields.items() if k in ("label", "type", "length", "length_unit")}
        body.pop("status", None)
        return body

    def delete(self, kind: str, ids: list[str]) -> None:
        for part in chunks(ids):
            self.request("DELETE", f"{ENDPOINTS[kind]}/", [{"id": i} for i in part])
