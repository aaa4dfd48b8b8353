"""Bounded input (issue 16): every hostile file is refused with one exact finding, quickly, and only
regular files are ever read. The hostile inputs are in tests/fixtures/hostile/ (FIFOs, devices and a
sparse multi-gigabyte file are made at test time: git cannot hold them)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, cli
from validator.base.limits import limits
from validator.pipeline import analyze

HOSTILE = FIXTURES / "hostile"
GOOD = (FIXTURES / "valid" / "small-inference.yaml").read_text()


def _only(path, display="d.yaml"):
    """(rule, line, col, message) of each finding."""
    return [(f.rule, f.line, f.col, f.message) for f in analyze(path, display).findings]


def test_recursive_alias_is_refused_at_the_alias():
    assert _only(HOSTILE / "recursive-alias.yaml") == [
        ("YAML006", 6, 3, "an alias refers to a node that contains it (a recursive alias)")]


def test_recursive_merge_key_is_refused():
    assert _only(HOSTILE / "recursive-merge.yaml") == [
        ("YAML006", 4, 1, "an alias refers to a node that contains it (a recursive alias)")]


def test_deep_nesting_is_refused_without_recursion_error():
    assert _only(HOSTILE / "deep-nesting.yaml") == [
        ("YAML006", 4, 6 + limits().max_yaml_depth, f"the document is nested more than {limits().max_yaml_depth} "
         "levels deep")]   # the document is level 1; `[` number k (column 6 + k) opens level k + 1


def test_aliases_of_aliases_are_bounded():
    # a9 reaches a0 through nine aliases: the ninth passes the limit of 8
    assert _only(HOSTILE / "alias-depth.yaml") == [("YAML006", 13, 1, "aliases are nested more than 8 deep")]


def test_string_bomb_is_refused_by_expanded_bytes():
    size = (HOSTILE / "string-bomb.yaml").stat().st_size
    assert size < 11_000    # 10 kB string x 10^4 aliases = 100 MB of text if expanded
    assert _only(HOSTILE / "string-bomb.yaml") == [
        ("YAML003", 7, 1, "the document expands to more than 10,000,000 bytes of text (anchors and aliases "
         "repeated too often)")]


def test_non_finite_numbers_are_refused_each_at_its_line():
    assert _only(HOSTILE / "non-finite.yaml") == [
        ("YAML007", 8, 44, ".inf is not a finite number"),
        ("YAML007", 9, 8, ".NaN is not a finite number"),
        ("YAML007", 10, 28, "1e999 is not a finite number"),
        ("YAML007", 13, 10, "1" + "0" * 36 + "... is not a finite number")]


def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "d.yaml"
    os.mkfifo(fifo)
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(_only(fifo)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "reading a named pipe blocked"
    assert result == [[("YAML000", 1, 1, "is not a regular file (a FIFO, socket or device is never read)")]]


def test_fifo_in_a_directory_walk_is_skipped_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "good.yaml").write_text(GOOD)
    code, out, _ = cli("validate", str(tmp_path))
    assert code == 0 and "1 design checked" in out and "1 other YAML file skipped" in out


def test_device_is_refused():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    assert _only(Path("/dev/zero")) == [("YAML000", 1, 1, "is not a regular file (a FIFO, socket or device is "
                                                          "never read)")]
    code, _, err = cli("validate", "/dev/zero")
    assert code == 2 and err == "clusterplan: error: /dev/zero: not a regular file or directory\n"


def test_huge_file_is_refused_before_it_is_read(tmp_path):
    """6 GiB (sparse: no disk, no time to make). Reading it whole would take gigabytes of memory; the
    size is checked first, and quoting the design's lines in the report reads it no more than that."""
    path = tmp_path / "d.yaml"
    with open(path, "wb") as fh:
        fh.truncate(6 * 1024**3)
    assert _only(path) == [("YAML000", 1, 1, f"file is {6 * 1024**3:,} bytes; the limit is "
                            f"{limits().max_file_bytes:,}")]
    code, out, _ = cli("validate", str(path))
    assert code == 1 and "6,442,450,944 bytes" in out


def test_unreadable_catalog_is_a_finding_not_a_crash(tmp_path):
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / "cat.yaml")
    design = tmp_path / "d.yaml"
    design.write_text(GOOD.replace("kind: InferenceFleet", "kind: InferenceFleet\ncatalogs: [cat.yaml]"))
    findings = analyze(design, "d.yaml").findings
    assert [(f.rule, f.message) for f in findings] == [
        ("YAML000", "is not a regular file (a FIFO, socket or device is never read)")]


def test_anchors_and_merges_a_design_uses_read_as_written_out(tmp_path):
    """Aliases share one built value and are charged, not built again: a design written with anchors and
    merge keys reads exactly as the same design written out."""
    plain = tmp_path / "plain.yaml"
    plain.write_text(GOOD.replace("  replica: {gpus: 1}", "  replica: {gpus: 1, tp: 1}"))
    anchored = tmp_path / "anchored.yaml"
    anchored.write_text(GOOD.replace("  rack: {model: rack-48u,", "  rack: &rack {model: rack-48u,").replace(
        "  replica: {gpus: 1}", "  replica: {<<: *one, tp: 1}").replace(
        "kind: InferenceFleet", "kind: InferenceFleet\nx-defaults: &one {gpus: 1}\n"))
    from validator.read.loader import load_yaml

    assert load_yaml(anchored.read_text(), "a.yaml").data == {**load_yaml(plain.read_text(), "p.yaml").data,
                                                              "x-defaults": {"gpus": 1}}
    assert _only(anchored)[0][3] == "unknown key 'x-defaults' in <root>"   # and the schema still checks it


def test_a_run_that_never_finishes_has_no_time_to_train():
    """Restarts that read a checkpoint at 5e-324 GB/s never end: goodput is 0 (1 / (1 + inf)), and
    time-to-train is unknown (null), never a division by zero or Infinity in the JSON."""
    code, out, err = cli("estimate", str(FIXTURES / "hostile" / "denormal-bandwidth.yaml"), "--format", "json")
    assert code == 0, err
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"JSON holds {c}"))
    assert data["goodput"] == 0 and data["time_to_train_days"] is None
