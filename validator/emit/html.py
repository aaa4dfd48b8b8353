"""The HTML report page (`clusterplan report`), rendered from plain data by templates/report/*.j2.

Autoescape is on: every name, message and source line from a design is text, never markup. The one piece
of markup that is not escaped is the topology picture, an SVG that Graphviz drew from escaped labels and
that `validator.emit.svg.inline_svg` checked holds drawing only. The page loads nothing: its style is
inline, it has no script, and its Content-Security-Policy forbids fetching anything.
"""

from __future__ import annotations

import json
from typing import Any

from validator.base.resources import resource_dir


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.{digits}g}" if abs(value) < 1e4 else f"{value:,.0f}"
    return str(value)


def _usd(value: Any) -> str:
    from validator.emit.escape import known

    if value is not None and known(value) is None:
        return "unknown"      # not finite, or past what a sheet holds (an overflowing price)
    return "unpriced" if value is None else f"${value:,.0f}"


def _pct(value: Any) -> str:
    return "unknown" if value is None else f"{value * 100:.3g}%"


def _money(value: Any) -> str:
    """Dollars with cents where the value is small ($1.64 per GPU-hour), whole dollars above $100."""
    from validator.emit.labels import show

    return show(value, "usd")


def _raw(value: Any) -> str:
    """The exact JSON value, for data-value attributes a test (or a script of the reader's) compares."""
    return json.dumps(value)


def render_page(page: dict[str, Any]) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    from markupsafe import Markup

    env = Environment(loader=FileSystemLoader(str(resource_dir("templates"))), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=_num, usd=_usd, pct=_pct, raw=_raw, money=_money)
    picture = page.get("picture") or {}
    svg = Markup(picture.get("svg", ""))    # checked by inline_svg: drawing elements only
    return env.get_template("report/page.html.j2").render(page=page, svg=svg)
