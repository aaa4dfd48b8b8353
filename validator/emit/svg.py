"""Graphviz, through the `graphviz` Python package (imported when a picture is asked for): DOT text to
SVG. Without Graphviz's `dot` program the caller gets a ToolError that says how to install it."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from validator.base.errors import ToolError

INSTALL = ("Graphviz's `dot` program is needed for SVG (Debian/Ubuntu: apt-get install graphviz; macOS: brew "
           "install graphviz); `--format dot` writes the DOT text without it")
_UNSAFE = re.compile(r"^(script|foreignObject|iframe|object|embed|use|image|a)$", re.IGNORECASE)


def render_svg(dot_text: str) -> str:
    """The SVG Graphviz's `dot` lays out for `dot_text`."""
    try:
        import graphviz
    except ImportError:
        raise ToolError("the `graphviz` Python package is not installed (pip install graphviz); " + INSTALL) from None
    try:
        svg: str = graphviz.pipe_string("dot", "svg", dot_text, encoding="utf-8", quiet=True)
    except graphviz.ExecutableNotFound:
        raise ToolError(INSTALL) from None
    except graphviz.CalledProcessError as exc:
        detail = exc.stderr.decode("utf-8", "replace").strip() if isinstance(exc.stderr, bytes) else str(exc)
        raise ToolError(f"Graphviz's dot failed: {detail[:500]}") from None
    return svg


def inline_svg(svg: str) -> str:
    """The <svg> element alone (no XML declaration or DOCTYPE), for inlining in HTML; refuses an SVG that
    holds anything but drawing (scripts, links, foreign content, event handlers)."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else ""
    root = ET.fromstring(body)
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if _UNSAFE.match(tag) or any(k.lower().startswith("on") or "href" in k.lower() for k in el.attrib):
            raise ToolError(f"the picture holds a <{tag}> element or attribute it must not; not inlined")
    return body
