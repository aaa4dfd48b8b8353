"""Diagnostics shared by every stage: a problem with a place in a file and a hint for the human."""

from __future__ import annotations

from dataclasses import dataclass, field

from validator.base.facts import fact

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """`('fabrics', 'compute', 'tiers', 0)` -> `fabrics.compute.tiers[0]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


@fact
class Diagnostic:
    """One problem found while reading a design (before the engineering rules run)."""

    code: str
    message: str
    file: str
    line: int = 1
    col: int = 1
    path: Path = ()
    hint: str = ""

    @property
    def key_path(self) -> str:
        return format_path(self.path)


@dataclass
class DesignError(Exception):
    """A design could not be read; carries every diagnostic found, not just the first."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        return "; ".join(f"{d.file}:{d.line}:{d.col}: {d.message}" for d in self.diagnostics)


class ToolError(Exception):
    """A usage or environment problem (missing file, unreadable path): exit code 2."""
