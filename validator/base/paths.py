"""Paths in messages, the repository root, and the repository boundary: one home for each."""

from __future__ import annotations

import os
from pathlib import Path


def display_name(path: Path) -> str:
    """Paths in messages are relative to the working directory when they can be."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def repository_root(design_path: Path) -> Path:
    """The git work tree holding the design, or the design's own directory outside git."""
    start = design_path.resolve().parent
    for parent in (start, *start.parents):
        if (parent / ".git").exists():
            return parent
    return start
