"""The cyclic garbage collector paused while a large plan is built (the floor plan, the cage plan, the tally)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off while a plan is built: the loops make millions of short-lived objects
    and no cycles, and every full collection would walk the topology's objects again (1.3 s CPU of the
    1M-GPU site's validate). Reference counting still frees everything; the previous state comes back.

    On the way out every tracked object, so what the block made (a floor plan's 500,000 objects), goes
    straight to the oldest generation (`gc.freeze()` then `gc.unfreeze()`: two list moves): left young,
    the next collections of the young generations would walk all of it twice before it got there (0.3 s
    of the 1M-GPU site's validate). It stays collectable: a full collection still walks it. Skipped while
    a caller has objects frozen (the move would unfreeze them)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():      # never unfreeze what a caller froze (render, before its forks)
                gc.freeze()
                gc.unfreeze()
            gc.enable()
