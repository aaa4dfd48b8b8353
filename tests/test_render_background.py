"""The cabling plan written by a second process (validator/emit/render/background.py, issue 33) is the
file a serial render writes, byte for byte, and the set's manifest records it; a child that fails
leaves the previous set in place."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import FIXTURES
from validator.base.errors import ToolError
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
