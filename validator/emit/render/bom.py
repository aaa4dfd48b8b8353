"""The bill of materials' human-facing outputs, rendered from templates/bom/*.j2 exactly as switch
configurations are: from one structured BOM (the JSON of `bom --format json`, the single source of
truth). A design repository overrides or adds BOM templates by name in its `templates:` directory
(bom/<name>.j2); those render in Jinja's sandbox."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from validator.derive.bom import Bom
from validator.emit.escape import csv_cell, json_safe, known
from validator.emit.tables import bom_summary, unit_power

BUILTIN = {"text": "bom/bom.txt.j2", "md": "bom/bom.md.j2", "procurement": "bom/procurement.csv.j2",
           "power": "bom/power.md.j2", "rfq": "bom/rfq.md.j2"}


def money(x: float | None) -> str:
    if x is not None and known(x) is None:
        return "unknown"      # not finite, or past what a sheet holds (an overflowing price)
    return "unpriced" if x is None else f"${x:,.0f}"


def kw(x: float | None) -> str:
    return "unknown" if x is None else f"{x:,.1f}"


def csv_field(value: Any) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([csv_cell(value)])
    return out.getvalue()


FILTERS = {"money": money, "kw": kw, "csv": csv_field, "unit_power": unit_power}


def vendor_of(catalog: Any, bom: Bom) -> dict[str, str]:
    """The catalog vendor of each BOM part that has one."""
    out: dict[str, str] = {}
    for item in bom.items:
        for kind in catalog.entries:
            entry = catalog.find(kind, item.part)
            vendor = getattr(entry, "vendor", None)
            if vendor:
                out[item.part] = str(vendor)
                break
    return out


def render_bom(template: str, bom: Bom, user_templates: Path | None = None, **extra: Any) -> str:
    """Render a BOM template: a built-in format name (text, md, procurement, power) or the name of
    a template under bom/ (built-in or the design repository's)."""
    from validator.emit.render import _Templates

    name = BUILTIN.get(template, f"bom/{template}")
    if not name.endswith(".j2"):
        name += ".j2"
    return _Templates(user_templates).render(name, bom=json_safe(bom.as_dict()), summary=bom_summary(bom), **extra)


def rfq_documents(bom: Bom, vendors: dict[str, str], user_templates: Path | None = None) -> dict[str, str]:
    """One request for quotation per vendor: file name -> text."""
    from validator.emit.render import _Templates

    env = _Templates(user_templates)
    data = json_safe(bom.as_dict())      # an overflowing price is unknown (None), never inf
    by_vendor: dict[str, list[dict[str, Any]]] = {}
    for item in data["items"]:
        if not item["included_in"]:
            by_vendor.setdefault(vendors.get(item["part"], "unknown vendor"), []).append(item)
    names = rfq_file_names(sorted(by_vendor))
    return {names[vendor]: env.render(BUILTIN["rfq"], bom=data, vendor=vendor, lines=lines)
            for vendor, lines in sorted(by_vendor.items())}


def rfq_file_names(vendors: list[str]) -> dict[str, str]:
    """One file name per vendor, `rfq-<slug>.md`; vendors whose names make the same slug ("Acme Inc" and
    "acme, inc.") get `-2`, `-3`... in sorted order, so that no request overwrites another."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for vendor in sorted(vendors):
        slug = re.sub(r"[^a-z0-9]+", "-", vendor.lower()).strip("-")[:60].strip("-") or "vendor"
        name, n = f"rfq-{slug}.md", 1
        while name in taken:
            n += 1
            name = f"rfq-{slug}-{n}.md"
        taken.add(name)
        out[vendor] = name
    return out
