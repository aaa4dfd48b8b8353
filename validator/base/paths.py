"""Paths in messages, the repository root, and the repository boundary: one home for each.

The repository is a boundary (docs/security.md): a design, a catalog, a price book, a template or an
output path named by a file of the repository must resolve, every symlink followed, to a place inside
the repository root. A pull request can add a symlink; it cannot make clusterplan read or write
through one to anywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from validator.base.errors import ToolError


class OutsideRepository(ToolError):
    """A path that resolves (symlinks followed) outside the repository root."""


def display_name(path: Path) -> str:
    """Paths in messages are relative to the working directory when they can be."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def repository_root(path: Path) -> Path:
    """The root a file is confined to: the git work tree that holds it where it is written (its own
    symlinks are not followed to find the repository, or a symlink would choose its own root), else
    its own directory (outside git: the directory given on the command line holds the design)."""
    start = Path(os.path.abspath(path))
    start = start if start.is_dir() and not start.is_symlink() else start.parent
    for parent in (start, *start.parents):
        if (parent / ".git").exists():
            return parent.resolve()
    return start.resolve()


def confine(path: Path, root: Path, what: str = "path") -> Path:
    """`path` with every symlink resolved, which must be `root` or lie below it; else OutsideRepository.

    The path need not exist (an output about to be written): the part that exists is resolved, so a
    symlinked directory on the way out is caught as well as a symlinked file.
    """
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    if real != base and not real.is_relative_to(base):
        raise OutsideRepository(f"{what} '{path}' leads outside the repository ({base}); symlinks out of the "
                                "repository are not followed")
    return real


def walk(top: Path | str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top)` top-down without following symlinks, iteratively: a tree any number of levels
    deep (a pull request can commit 1,100 nested directories) never reaches the interpreter's recursion
    limit. The caller may prune `dirs` in place, as with os.walk; a directory that cannot be read is
    skipped."""
    stack = [os.fspath(top)]
    while stack:
        current = stack.pop()
        dirs: list[str] = []
        names: list[str] = []
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    (dirs if entry.is_dir(follow_symlinks=False) else names).append(entry.name)
        except OSError:
            continue
        yield current, dirs, names
        stack.extend(os.path.join(current, d) for d in reversed(dirs))
