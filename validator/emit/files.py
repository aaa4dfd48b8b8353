"""Atomic file writes: a temporary file in the same directory, then a rename. A crash or kill
mid-write leaves the previous file intact; readers never see half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO


def _atomic(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_atomic(path: Path, data: str | bytes) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _atomic(path, lambda fh: fh.write(payload))


def write_atomic_lines(path: Path, lines: Iterable[str]) -> None:
    """Stream text into a temporary file beside `path`, then rename it over `path`."""
    def fill(fh: BinaryIO) -> None:
        for line in lines:
            fh.write(line.encode("utf-8"))

    _atomic(path, fill)
