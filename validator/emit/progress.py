"""Progress of long commands, on stderr only (stdout holds the output, `--format json` included).

A command runs in stages (`stage`: read and expand, derive and check, each output) and counts what a
stage goes through (`progress`: the configurations, the rows of a cabling plan). Nothing shows while the
command is younger than `CLUSTERPLAN_PROGRESS_AFTER` seconds (default 2: a short run stays silent), nor
a stage younger than a quarter of that (a validate of 500 small designs does not print 1,000 stages), nor
a stage inside another (the designs of a sweep). After that:

- on a terminal, one line per stage drawn by rich (a spinner, the stage, a bar and `done/total` where
  the stage counts, the elapsed time), each left on the screen when its stage ends;
- elsewhere (a pipe, a log file, CI: `CI` or `GITHUB_ACTIONS` set even on a terminal), plain lines
  `clusterplan: <stage> <done>/<total> (<seconds> s)` when a stage starts, every
  `CLUSTERPLAN_PROGRESS_EVERY` seconds (default 10) while it runs and when it ends.

`--quiet` (`begin(quiet=True)`) or `CLUSTERPLAN_NO_PROGRESS` set silences it. Counting costs an integer
increment per item; the display is drawn by a background thread (rich, imported only once something
shows), so a command pays nothing for progress it never shows.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
_LIVE_EVERY_S = 0.1


class _Session:
    quiet = False
    started = time.monotonic()
    depth = 0          # stages open now: one inside another (a design of a sweep) does not show


def begin(quiet: bool = False) -> None:
    """A command starts: the delay before progress shows counts from now; `quiet` silences it."""
    _Session.quiet = quiet
    _Session.started = time.monotonic()


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


def enabled() -> bool:
    return not _Session.quiet and not os.environ.get("CLUSTERPLAN_NO_PROGRESS")


def _live() -> bool:
    """A terminal a person watches (rich draws), not a pipe or a CI log (plain lines)."""
    ci = os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS")
    return not ci and sys.stderr.isatty()


class Stage:
    """One stage: its label, how many items it has done of how many (None: it does not count)."""

    def __init__(self, label: str, total: int | None) -> None:
        self.label, self.total, self.done = label, total, 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False

    def advance(self, n: int = 1) -> None:
        self.done += n

    def text(self) -> str:
        count = f" {self.done:,}/{self.total:,}" if self.total is not None else ""
        return f"clusterplan: {self.label}{count} ({time.monotonic() - self.started:.0f} s)"

    def _run(self) -> None:
        after = _seconds("CLUSTERPLAN_PROGRESS_AFTER", 2.0)
        # from `after` seconds into the command, and only a stage that lasts (not each of 500 designs)
        wait = max(_Session.started + after, self.started + after / 4) - time.monotonic()
        if wait > 0 and self._stop.wait(wait):    # with no delay it always shows, however short
            return
        self._shown = True
        if _live():
            self._draw()
            return
        every = max(0.1, _seconds("CLUSTERPLAN_PROGRESS_EVERY", 10.0))
        _line(self.text())
        while not self._stop.wait(every):
            _line(self.text())

    def _draw(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns: list[Any] = [SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.description}")]
        if self.total is not None:
            columns += [BarColumn(), MofNCompleteColumn()]
        display = Progress(*columns, TimeElapsedColumn(), console=Console(file=sys.stderr), auto_refresh=False,
                           redirect_stdout=False, redirect_stderr=False)     # stdout stays the output's
        task = display.add_task(self.label, total=self.total)
        with display:
            while not self._stop.wait(_LIVE_EVERY_S):
                display.update(task, completed=self.done)
                display.refresh()
            finished = (self.total, self.done) if self.total is not None else (1, 1)   # a tick, not a spinner
            display.update(task, total=finished[0], completed=finished[1])
            display.refresh()

    def __enter__(self) -> Stage:
        if enabled() and _Session.depth == 0:
            self._thread = threading.Thread(target=self._run, name=f"progress {self.label}", daemon=True)
            self._thread.start()
        _Session.depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        _Session.depth -= 1
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        if self._shown and not _live():
            _line(self.text() + " done")


_LOCK = threading.Lock()


def _line(text: str) -> None:
    with _LOCK:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def stage(label: str, total: int | None = None) -> Stage:
    """`with stage("derive and check"):` around a stage of a command; `.advance()` counts its items."""
    return Stage(label, total)


def progress(items: Iterable[T], total: int, label: str) -> Iterator[T]:
    """Yield `items` as one counted stage of `total` items."""
    with stage(label, total) as current:
        for item in items:
            current.done += 1
            yield item

