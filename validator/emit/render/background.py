"""One output of `render` written by a second process while this one renders the configurations.

The cabling plan of a 100k-GPU design (half a million rows) is about a third of render's work and
needs nothing the configurations produce. On a machine with two cores or more, and for a plan of at
least `MIN_LINKS` links, a child is forked once the analysis is done: it writes the plan through a file
the parent opened in the staging directory (the child never touches a path, so a child outliving a
killed parent writes only into a file nobody will read), counts its rows in shared memory for the
progress display, and sends the file's SHA-256 back through a pipe. The bytes are those the same
function writes in this process; with one core, without fork, or for a small plan, it is written here.
"""

from __future__ import annotations

import gc
import hashlib
import mmap
import os
import select
import signal
import struct
from collections.abc import Callable, Iterable
from typing import BinaryIO

from validator.base.errors import ToolError
from validator.emit.files import OutputSet
from validator.emit.progress import begin, stage

MIN_LINKS = 20_000


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:       # not Linux
        return os.cpu_count() or 1


def fork_child(run: Callable[[mmap.mmap, int], int]) -> tuple[mmap.mmap, int, int]:
    """Fork a child that runs `run(counter, pipe)` and exits with its status without running this process's
    exit code; returns the shared counter, the pipe's reading end and the child's pid."""
    counter = mmap.mmap(-1, 8)
    reader, writer = os.pipe()
    # Every object made so far is left out of the child's collections: a collection writes to the header of each
    # object it walks, and each write copies a page of the parent's memory (copy-on-write; several seconds of
    # system time at 100k GPUs). This process takes them back at once, also when fork fails (the error goes to
    # the caller with the pipe closed).
    gc.freeze()
    try:
        pid = os.fork()
    except BaseException:
        gc.unfreeze()
        os.close(reader)
        os.close(writer)
        counter.close()
        raise
    if pid == 0:
        os.close(reader)
        os._exit(run(counter, writer))
    gc.unfreeze()
    os.close(writer)
    return counter, reader, pid


class Background:
    """A file of `out` being written by a forked child; `finish` waits for it and records it."""

    def __init__(self, out: OutputSet, rel: str, lines: Callable[[], Iterable[str]]) -> None:
        self.out, self.rel = out, rel
        fh = out.create(rel)
        try:
            self.counter, self.reader, self.pid = fork_child(lambda counter, writer: _child(fh, lines, counter, writer))
        finally:         # the child has its own copy; here it is closed also when fork fails
            fh.close()
        self.reaped = False

    def finish(self, label: str, total: int) -> None:
        with stage(label, total) as current:
            while not select.select([self.reader], [], [], 0.1)[0]:
                current.done = max(0, struct.unpack_from("q", self.counter)[0] - 1)
            current.done = max(0, struct.unpack_from("q", self.counter)[0] - 1)
            with os.fdopen(self.reader, "rb") as fh:
                digest = fh.read().decode()
            _pid, status = os.waitpid(self.pid, 0)
            self.reaped = True
        if status != 0 or len(digest) != 64:
            raise ToolError(f"writing {self.rel} in a second process failed (status {status})")
        self.out.record(self.rel, digest)

    def abandon(self) -> None:
        """Stop the child (this process failed first) and reap it, unless `finish` already did: no process
        outlives a failed render, nor stays a zombie in a long-running caller (validator.api)."""
        if not self.reaped:
            self.reaped = True
            stop_child(self.pid, self.reader)


def stop_child(pid: int, reader: int) -> None:
    """Kill a child `fork_child` started, reap it and close its pipe (once: the caller says it is not reaped)."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(reader)
    except OSError:
        pass


def _child(fh: BinaryIO, lines: Callable[[], Iterable[str]], counter: mmap.mmap, writer: int) -> int:
    try:
        begin(quiet=True)        # the parent shows this file's progress from `counter`
        digest = hashlib.sha256()
        n = 0
        for text in lines():     # whole lines, one or a block of them (emit/cabling_csv.py)
            chunk = text.encode("utf-8")
            digest.update(chunk)
            fh.write(chunk)
            n += text.count("\n")
            struct.pack_into("q", counter, 0, n)
        fh.close()
        os.write(writer, digest.hexdigest().encode())
        return 0
    except BaseException:        # the parent reports it
        return 1


def write_beside(out: OutputSet, rel: str, lines: Callable[[], Iterable[str]], links: int) -> Background | None:
    """Start writing `rel` in a second process when it pays (see the module); None: write it here."""
    if links < MIN_LINKS or cores() < 2 or not hasattr(os, "fork"):
        return None
    return Background(out, rel, lines)
