"""The first routed fabric's configurations rendered by a forked worker (validator/emit/render/workers.py,
issue 33) are the files an in-process render writes, byte for byte, in the same order and with the same
NOTES.md; a template error in the worker is the same TemplateError; notes merge in render order."""

from __future__ import annotations

import os

import pytest

from tests.test_render_background import DESIGN, _tree, spy_forks
from validator.base.errors import ToolError
from validator.emit import render
from validator.emit.render import TemplateError, background, render_all, workers
from validator.emit.render.notes import Notes
from validator.pipeline import analyze

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def test_a_fabric_rendered_by_a_worker_is_the_in_process_one(tmp_path, monkeypatch):
    analysis = analyze(DESIGN)
    monkeypatch.setattr(workers, "MIN_SWITCHES", 10**9)
    serial = render_all(analysis, tmp_path / "serial")
    monkeypatch.setattr(workers, "MIN_SWITCHES", 0)
    started = spy_forks(monkeypatch)
    parallel = render_all(analysis, tmp_path / "parallel")
    assert len(started) == 1           # one worker (the cabling plan is too small to go beside)
    assert parallel == serial          # the same files in the same order
    assert _tree(tmp_path / "parallel") == _tree(tmp_path / "serial")
    assert any(p.startswith("configs/compute/") for p in serial)


def test_a_fabric_split_between_the_worker_and_this_process_is_the_in_process_one(tmp_path, monkeypatch):
    """The compute fabric's first switches rendered by the worker and its last ones here (then the other
    fabrics): the same files, in the same order, with the same NOTES.md as a serial render."""
    analysis = analyze(DESIGN)
    monkeypatch.setattr(workers, "MIN_SWITCHES", 10**9)
    serial = render_all(analysis, tmp_path / "serial")
    monkeypatch.setattr(workers, "MIN_SWITCHES", 0)
    kept: list[int] = []
    monkeypatch.setattr(render, "split", lambda first, rest: kept.append(first // 3) or kept[-1])   # a third here
    started = spy_forks(monkeypatch)
    parallel = render_all(analysis, tmp_path / "parallel")
    assert len(started) == 1 and kept and kept[0] > 0     # the compute fabric was split
    assert parallel == serial
    assert _tree(tmp_path / "parallel") == _tree(tmp_path / "serial")


@pytest.mark.parametrize(("first", "rest", "here"), [
    (5824, 0, 2912),        # one routed fabric (the 100k-GPU inference design): half of it here
    (5000, 1000, 2000),     # (5000 - 1000) / 2: both processes then have 3,000 switches
    (4224, 2709, 0),        # the 100k-GPU training design: the others are more than a quarter: not split
    (1000, 3000, 0),        # the others are more than the first: nothing of it here
])
def test_the_split_evens_the_two_processes_out(monkeypatch, first, rest, here):
    monkeypatch.setattr(background, "cores", lambda: 2)
    monkeypatch.setattr(workers, "MIN_SPLIT", 0)
    assert workers.split(first, rest) == here
    monkeypatch.setattr(background, "cores", lambda: 1)
    assert workers.split(first, rest) == 0


@pytest.mark.parametrize(("first", "rest", "here"), [
    (1024, 0, 512),         # exactly MIN_SPLIT switches: split
    (1023, 0, 0),           # one fewer: the worker renders all of it
    (1024, 255, 384),       # the others just under a quarter: (1024 - 255) // 2
    (1024, 256, 0),         # exactly a quarter: not split
])
def test_the_split_at_its_thresholds(monkeypatch, first, rest, here):
    monkeypatch.setattr(background, "cores", lambda: 2)
    assert workers.MIN_SPLIT == 1024 and workers.split(first, rest) == here


def _break_the_workers_fabric(monkeypatch, error: BaseException) -> None:
    """The worker renders the compute fabric and fails there with `error`; this process renders the others."""
    monkeypatch.setattr(workers, "MIN_SWITCHES", 0)
    monkeypatch.setattr(background, "cores", lambda: 2)

    real = render._device_files

    def broken(env, d, notes):
        if d.fabric == "compute":
            raise error
        return real(env, d, notes)

    monkeypatch.setattr(render, "_device_files", broken)


@pytest.mark.parametrize(("error", "raised", "message"), [
    # a template error is the same TemplateError, as a serial render raises it
    (TemplateError("template nvue/startup.yaml.j2:3: broken"), TemplateError, r"startup\.yaml\.j2:3: broken"),
    # any other failure: a ToolError with the child's traceback
    (KeyError("no-such-port"), ToolError, r"second process failed \(exit code 0\):\n(?s:.*)KeyError: 'no-such-port'"),
])
def test_a_failure_in_the_worker_is_raised_here_and_nothing_is_written(tmp_path, monkeypatch, error, raised, message):
    analysis = analyze(DESIGN)
    _break_the_workers_fabric(monkeypatch, error)
    with pytest.raises(raised, match=message):
        render_all(analysis, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_worker_is_stopped_when_this_process_fails_while_waiting_for_it(tmp_path, monkeypatch):
    """Interrupted while it waits for the child: the child is killed and reaped before the staging directory
    is removed, so nothing of the set is left and no process outlives the command."""
    analysis = analyze(DESIGN)
    monkeypatch.setattr(workers, "MIN_SWITCHES", 0)
    pids = spy_forks(monkeypatch)

    class Interrupted(BaseException):     # as KeyboardInterrupt, which the test runner would take for its own
        pass

    def interrupted(self, show):
        raise Interrupted

    monkeypatch.setattr(workers.ConfigWorker, "finish", interrupted)
    with pytest.raises(Interrupted):
        render_all(analysis, tmp_path / "out")
    assert len(pids) == 1
    with pytest.raises(ChildProcessError):       # already reaped: not running, not a zombie
        os.waitpid(pids[0], os.WNOHANG)
    assert list(tmp_path.iterdir()) == []


def test_a_failure_in_this_process_part_of_a_split_fabric_stops_the_worker(tmp_path, monkeypatch):
    """The compute fabric split (its last third here): a template error on one of this process's switches of it
    is raised, the worker rendering the fabric's first switches is killed and reaped, and nothing is left."""
    analysis = analyze(DESIGN)
    monkeypatch.setattr(workers, "MIN_SWITCHES", 0)
    monkeypatch.setattr(background, "cores", lambda: 2)
    monkeypatch.setattr(render, "split", lambda first, rest: first // 3)
    last = analysis.topology.fabrics["compute"].switches
    real = render._device_files

    def broken(env, d, notes):
        if d.fabric == "compute" and d.serial == last:     # the fabric's last switch: this process's part
            raise TemplateError("template nvue/startup.yaml.j2:1: broken here")
        return real(env, d, notes)

    monkeypatch.setattr(render, "_device_files", broken)
    pids = spy_forks(monkeypatch)
    with pytest.raises(TemplateError, match="broken here"):
        render_all(analysis, tmp_path / "out")
    assert len(pids) == 1
    with pytest.raises(ChildProcessError):       # reaped: not running, not a zombie
        os.waitpid(pids[0], os.WNOHANG)
    assert list(tmp_path.iterdir()) == []


def test_notes_merge_in_render_order():
    first = Notes(sonic=2, oob=1, unrendered={"eos": ["a"]}, no_headroom={"X": {100}}, eos_headroom=True)
    then = Notes(sonic=3, unrendered={"eos": ["b"], "ios": ["c"]}, no_headroom={"X": {200}}, no_buffers={"Y"})
    merged = workers.merge_notes(first, then)
    assert (merged.sonic, merged.oob, merged.eos_headroom) == (5, 1, True)
    assert merged.unrendered == {"eos": ["a", "b"], "ios": ["c"]}
    assert merged.no_headroom == {"X": {100, 200}} and merged.no_buffers == {"Y"}
