"""The configurations of one fabric rendered by a forked worker while this process renders the rest.

At 100k GPUs the compute fabric's configurations are most of render's work. On a machine with two cores or
more and for a fabric of at least `MIN_SWITCHES` routed switches, a child forked after the analysis renders
that fabric's files into the staging directory with the same code (`render_fabric`), counts them in shared
memory for the progress display and sends back, through a pipe, each file's path and SHA-256 in order and its
NOTES.md findings; the parent merges them where the serial order has them (the fabric comes first). A template
error in the child is raised in the parent as the same TemplateError; any other failure is a ToolError with
the child's traceback, and the set is not swapped in. If this process fails first (or is interrupted while it
waits), the child is killed and reaped before the staging directory goes. With one core, without fork or
for a smaller fabric, everything renders here."""

from __future__ import annotations

import hashlib
import mmap
import os
import pickle
import select
import struct
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from validator.base.errors import ToolError
from validator.emit.files import OutputSet
from validator.emit.progress import begin
from validator.emit.render import background
from validator.emit.render.notes import Notes

MIN_SWITCHES = 256
MIN_SPLIT = 1024        # a fabric this large is shared between the worker and this process (`split`)

# The files of the fabric and its notes, or the message of a template error, or the traceback of another failure
Result = tuple[list[tuple[str, str]], Notes | None, str | None, str | None]


class ConfigWorker:
    """A fabric's configurations being written by a forked child; `finish` waits for them."""

    def __init__(self, out: OutputSet, files: Callable[[Notes], Iterable[tuple[str, str]]]) -> None:
        self.counter, self.reader, self.pid = background.fork_child(
            lambda counter, writer: _child(out, files, counter, writer))
        self.reaped = False

    @property
    def done(self) -> int:
        """Switches the child has rendered so far."""
        return int(struct.unpack_from("q", self.counter)[0])

    def finish(self, show: Callable[[int], None]) -> tuple[list[tuple[str, str]], Notes]:
        """The child's files (path, SHA-256) in order and its notes; `show(switches done)` while it works."""
        from validator.emit.render import TemplateError

        while not select.select([self.reader], [], [], 0.1)[0]:
            show(self.done)
        show(self.done)
        with os.fdopen(self.reader, "rb") as fh:
            payload = fh.read()
        _pid, status = os.waitpid(self.pid, 0)
        self.reaped = True
        try:
            records, notes, error, failure = pickle.loads(payload)
        except Exception:        # no or a truncated report: the child died writing it
            records, notes, error, failure = [], None, None, None
        if error is not None:
            raise TemplateError(error)
        if notes is None:
            code = os.waitstatus_to_exitcode(status)
            how = f"exit code {code}" if code >= 0 else f"killed by signal {-code}"
            raise ToolError(f"rendering configurations in a second process failed ({how})"
                            + (f":\n{failure}" if failure else ""))
        return records, notes


    def abandon(self) -> None:
        """Stop the child (this process failed first) and reap it, unless `finish` already did."""
        if not self.reaped:
            self.reaped = True
            background.stop_child(self.pid, self.reader)


def _child(out: OutputSet, files: Callable[[Notes], Iterable[tuple[str, str]]], counter: mmap.mmap,
           writer: int) -> int:
    from validator.emit.render import TemplateError

    result: Result
    try:
        begin(quiet=True)        # the parent shows this fabric's progress from `counter`
        notes, records, n = Notes(), [], 0
        for rel, text in files(notes):
            if not rel:          # a switch is done
                n += 1
                struct.pack_into("q", counter, 0, n)
                continue
            data = text.encode("utf-8")
            with out.create(rel) as fh:
                fh.write(data)
            records.append((rel, hashlib.sha256(data).hexdigest()))
        result = (records, notes, None, None)
    except TemplateError as exc:
        result = ([], None, str(exc), None)
    except BaseException:        # the parent reports it, with this traceback
        result = ([], None, None, traceback.format_exc())
    try:
        with os.fdopen(writer, "wb") as fh:
            fh.write(pickle.dumps(result))
        return 0
    except BaseException:
        return 1


def start_worker(out: OutputSet, switches: int, files: Callable[[Notes], Iterable[tuple[str, str]]]) -> \
        ConfigWorker | None:
    """Start rendering a fabric in a second process when it pays (see the module); None: render it here."""
    if switches < MIN_SWITCHES or background.cores() < 2 or not hasattr(os, "fork"):
        return None
    return ConfigWorker(out, files)


def split(first: int, rest: int) -> int:
    """How many of the first fabric's `first` switches this process renders beside a worker, the other routed
    fabrics having `rest` (switches as the measure of work): enough to even the two out, but only where the
    others are less than a quarter of the first (the 100k-GPU inference design has no other routed fabric), as
    both processes then work out the fabric's link ends (about 1 s CPU at 100k GPUs), and only for a fabric of
    `MIN_SPLIT` switches or more. Else none: the worker renders the whole fabric."""
    if first < MIN_SPLIT or rest * 4 >= first or background.cores() < 2 or not hasattr(os, "fork"):
        return 0
    return (first - rest) // 2


def merge_notes(first: Notes, then: Notes) -> Notes:
    """The notes of two parts of one render, `first` rendered before `then` (lists keep that order)."""
    merged = Notes()
    for name in vars(merged):
        a: Any = getattr(first, name)
        b: Any = getattr(then, name)
        if isinstance(a, bool):
            value: Any = a or b
        elif isinstance(a, int):
            value = a + b
        elif isinstance(a, set):
            value = a | b
        else:                    # a dict: sets and lists under one key are joined, other values the later one
            value = dict(a)
            for key, item in b.items():
                old = value.get(key)
                value[key] = old | item if isinstance(old, set) else [*old, *item] if isinstance(old, list) else item
        setattr(merged, name, value)
    return merged
