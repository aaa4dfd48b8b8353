"""A progress bar on stderr for long commands, only on a terminal (never when piped or in CI)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
_WIDTH = 30
_EVERY_S = 0.2


def enabled() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI") and not os.environ.get("CLUSTERPLAN_NO_PROGRESS")


def progress(items: Iterable[T], total: int, label: str, min_total: int = 1000) -> Iterator[T]:
    """Yield `items`, drawing `label [#####.....] n/total` at most five times a second (from `min_total`
    items: a short loop finishes before a bar helps)."""
    if not enabled() or total < min_total:
        yield from items
        return
    last = 0.0
    for done, item in enumerate(items, start=1):
        now = time.monotonic()
        if now - last >= _EVERY_S:
            last = now
            filled = int(_WIDTH * done / total)
            sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (_WIDTH - filled)}] {done:,}/{total:,}")
            sys.stderr.flush()
        yield item
    sys.stderr.write("\r" + " " * (len(label) + _WIDTH + 30) + "\r")
    sys.stderr.flush()
