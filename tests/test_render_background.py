"""The cabling plan written by a second process (validator/emit/render/background.py, issue 33) is the
file a serial render writes, byte for byte, and the set's manifest records it; a child that fails
leaves the previous set in place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import FIXTURES
from validator.base.errors import ToolError
from validator.emit.files import OutputSet
from validator.emit.render import background, render_all
from validator.pipeline import analyze

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
DESIGN = FIXTURES / "valid" / "small-training.yaml"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_plan_written_beside_is_the_serial_one(tmp_path, monkeypatch):
    analysis = analyze(DESIGN)
    monkeypatch.setattr(background, "MIN_LINKS", 10**9)
    serial = render_all(analysis, tmp_path / "serial")
    monkeypatch.setattr(background, "MIN_LINKS", 0)
    monkeypatch.setattr(background, "cores", lambda: 2)
    started = []
    real = background.Background.__init__

    def spy(self, *args, **kwargs):
        started.append(args[1])
        real(self, *args, **kwargs)

    monkeypatch.setattr(background.Background, "__init__", spy)
    beside = render_all(analysis, tmp_path / "beside")
    assert started == ["cabling.csv"] and beside == serial
    assert _tree(tmp_path / "beside") == _tree(tmp_path / "serial")
    assert (tmp_path / "beside" / "cabling.csv").read_text().count("\n") > 100


def test_a_failing_child_leaves_the_previous_set(tmp_path, monkeypatch):
    analysis = analyze(DESIGN)
    render_all(analysis, tmp_path / "out")
    before = _tree(tmp_path / "out")
    monkeypatch.setattr(background, "MIN_LINKS", 0)
    monkeypatch.setattr(background, "cores", lambda: 2)

    def broken(*_args, **_kwargs):
        raise OSError("disk full")
        yield ""

    monkeypatch.setattr("validator.emit.tables.cabling_csv_rows", broken)
    with pytest.raises(ToolError, match=r"cabling\.csv in a second process failed"):
        render_all(analysis, tmp_path / "out")
    assert _tree(tmp_path / "out") == before and sorted(os.listdir(tmp_path)) == ["out"]


def test_a_failure_here_stops_and_reaps_the_cabling_process(tmp_path, monkeypatch):
    """The configurations fail in this process while the cabling plan is being written beside: the child is
    killed and reaped (no process outlives the render, none stays a zombie in a caller of validator.api)."""
    from validator.emit import render

    analysis = analyze(DESIGN)
    monkeypatch.setattr(background, "MIN_LINKS", 0)
    pids = spy_forks(monkeypatch)

    def broken(*_args, **_kwargs):
        raise render.TemplateError("template sonic/config_db.json.j2:1: broken")

    monkeypatch.setattr(render, "_device_files", broken)
    with pytest.raises(render.TemplateError, match="broken"):
        render_all(analysis, tmp_path / "out")
    assert len(pids) == 1
    with pytest.raises(ChildProcessError):       # already reaped
        os.waitpid(pids[0], os.WNOHANG)
    assert sorted(os.listdir(tmp_path)) == []


def spy_forks(monkeypatch) -> list[int]:
    """Two cores, and the pids of the children `fork_child` starts (to check they are reaped)."""
    monkeypatch.setattr(background, "cores", lambda: 2)
    pids: list[int] = []
    real = background.fork_child

    def fork(run):
        counter, reader, pid = real(run)
        pids.append(pid)
        return counter, reader, pid

    monkeypatch.setattr(background, "fork_child", fork)
    return pids


def test_a_fork_that_fails_leaves_no_frozen_heap_and_no_open_pipe(tmp_path, monkeypatch):
    """fork_child freezes the collector's view of the heap just before fork (so the child's collections do not
    copy the parent's pages). If fork fails (EAGAIN at a process limit, ENOMEM under a 100k-GPU heap), the
    error reaches the caller, and this process has its collector and its file descriptors as before: a
    long-running caller (validator.api) would otherwise never collect a cycle made before it again."""
    import errno
    import gc

    analysis = analyze(DESIGN)
    monkeypatch.setattr(background, "MIN_LINKS", 0)
    monkeypatch.setattr(background, "cores", lambda: 2)

    def no_fork() -> int:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    frozen, fds = gc.get_freeze_count(), sorted(os.listdir("/proc/self/fd"))
    opened, create = [], OutputSet.create
    monkeypatch.setattr(OutputSet, "create", lambda out, rel: opened.append(create(out, rel)) or opened[-1])
    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(OSError, match="Resource temporarily unavailable"):
        render_all(analysis, tmp_path / "out")
    assert gc.get_freeze_count() == frozen
    assert opened and all(fh.closed for fh in opened)      # the cabling plan's file, opened for the child
    assert sorted(os.listdir("/proc/self/fd")) == fds
    assert list(tmp_path.iterdir()) == []
