"""`paused_gc` (validator.base.gc_pause): the collector off in the block, back on after it; what the block made
moved to the oldest generation yet still collectable. And the process entry point `run` (validator.commands)."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

from hypothesis import given, settings
from hypothesis import strategies as st

from validator.base.gc_pause import paused_gc


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_off_in_the_block_and_restored() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():          # nested: the inner block leaves the collector off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_disabled_when_it_was() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(min_value=1, max_value=50))
def test_made_in_the_block_is_old_and_collectable(cycles: int) -> None:
    """Objects made in the block are in generation 2 afterwards (none left young), and a cycle dropped in the
    block is still freed by a full collection (nothing frozen for good)."""
    with paused_gc():
        kept = [_Node() for _ in range(cycles)]
        dropped = []
        for _ in range(cycles):
            a, b = _Node(), _Node()
            a.other, b.other = b, a
            dropped.append(weakref.ref(a))
        del a, b
    assert gc.get_freeze_count() == 0
    assert all(_in_generation(k, 2) for k in kept[:3])
    assert not any(_in_generation(k, 0) or _in_generation(k, 1) for k in kept[:3])
    gc.collect()
    assert all(r() is None for r in dropped)


def test_run_is_the_module_entry_point() -> None:
    """`python -m validator` goes through `run` (main, then the survivors frozen): same exit and output."""
    out = subprocess.run([sys.executable, "-m", "validator", "--version"], capture_output=True, text=True)
    ref = subprocess.run([sys.executable, "-c", "from validator.commands import main; main()", "--version"],
                         capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (ref.returncode, ref.stdout)
    assert out.returncode == 0 and out.stdout.strip()


def test_a_callers_freeze_is_kept() -> None:
    """Objects a caller froze before the block (render freezes before it forks) stay frozen after it."""
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        assert before > 0
        with paused_gc():
            made = _Node()
        assert gc.get_freeze_count() == before
        assert _in_generation(made, 0) or _in_generation(made, 1) or _in_generation(made, 2)
    finally:
        gc.unfreeze()
