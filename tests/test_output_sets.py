"""Gated, atomic output sets (issue 16): `render` and `outputs` write nothing for a design with error
findings unless --force; a set is replaced whole, so a kill at any moment leaves the previous complete
set or the new one; no temporary file is left; files clusterplan did not write stay."""

from __future__ import annotations

import os
import random
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, cli
from validator.emit.files import MANIFEST, OutputSet, write_atomic
from validator.pipeline import analyze

EOS = (FIXTURES / "render" / "small-eos.yaml").read_text()
SONIC = EOS.replace("arista-7060x6-64pe", "sonic-th5-64x800")   # other file names: .config_db.json
FAILING = (Path(__file__).parent / "rules" / "FAC001" / "fail.yaml").read_text()   # an error finding: FAC001
SMALL = (FIXTURES / "valid" / "small-inference.yaml").read_text()           # one SONiC leaf: 4 files
SMALL_EOS = SMALL.replace("sonic-th5-64x800", "arista-7060x6-64pe")       # one EOS leaf: other file names


def _tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _design(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_render_writes_nothing_for_a_design_with_errors(tmp_path):
    design = _design(tmp_path, "bad.yaml", FAILING)
    out = tmp_path / "out"
    code, _, err = cli("render", str(design), "-o", str(out))
    assert code == 1 and not out.exists()
    assert err.splitlines()[-1] == (f"clusterplan: error: {os.path.relpath(design)} has 1 error finding: nothing "
                                    "is written for a design that fails validation (fix it, or pass --force to "
                                    "write anyway)")
    assert re.search(rf"{re.escape(os.path.relpath(design))}:12:\d+: error FAC001", err)   # the case's `# expect`


def test_render_force_writes_and_says_so(tmp_path):
    design = _design(tmp_path, "bad.yaml", FAILING)
    code, _, err = cli("render", str(design), "-o", str(tmp_path / "out"), "--force")
    assert code == 0 and err.endswith(f"files under {tmp_path / 'out'} despite 1 error finding (--force)\n")
    assert (tmp_path / "out" / "bom.json").is_file()


def test_a_new_set_replaces_the_old_one_and_keeps_foreign_files(tmp_path):
    out = tmp_path / "out"
    assert cli("render", str(_design(tmp_path, "eos.yaml", EOS)), "-o", str(out))[0] == 0
    (out / "README.txt").write_text("mine")
    (out / "configs" / "notes").mkdir()
    (out / "configs" / "notes" / "todo.txt").write_text("also mine")
    inode = (out / "README.txt").stat().st_ino
    eos = _tree(out)
    assert cli("render", str(_design(tmp_path, "sonic.yaml", SONIC)), "-o", str(out))[0] == 0
    after = _tree(out)
    assert not [f for f in after if f.endswith(".cfg")] and any(f.endswith("config_db.json") for f in after)
    # both designs have the same out-of-band network: its switch configs are in both sets
    oob = {"configs/oob/oob-leaf0001.startup.yaml", "configs/oob/oob-spine0001.startup.yaml"}
    assert eos.keys() & after.keys() == {"README.txt", "configs/notes/todo.txt", "bom.json", "bom.csv",
                                         "cabling.csv", "configs/NOTES.md", MANIFEST, *oob}
    assert (out / "README.txt").stat().st_ino == inode and (out / "configs" / "notes" / "todo.txt").read_text() \
        == "also mine"
    assert sorted(os.listdir(tmp_path)) == ["eos.yaml", "out", "sonic.yaml"]   # nothing staged is left


def test_a_failing_template_leaves_the_previous_set(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tpl" / "eos").mkdir(parents=True)
    design = _design(tmp_path, "d.yaml", EOS.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    out = tmp_path / "out"
    assert cli("render", str(design), "-o", str(out))[0] == 0
    before = _tree(out)
    (tmp_path / "tpl" / "eos" / "running-config.j2").write_text("{{ no_such_fact }}")
    code, _, err = cli("render", str(design), "-o", str(out))
    assert code == 1 and "template eos/running-config.j2" in err
    assert _tree(out) == before and sorted(os.listdir(tmp_path)) == [".git", "d.yaml", "out", "tpl"]


def test_leftovers_of_a_killed_run_are_removed_by_the_next(tmp_path):
    out = tmp_path / "out"
    staging = tmp_path / ".out.clusterplan-staging"
    (staging / "configs").mkdir(parents=True)
    (staging / "configs" / "half.cfg").write_text("half")
    dead = _dead_pid()
    stale = tmp_path / f".bom.json.{dead}.x1y2.tmp"
    stale.write_text("half")
    assert cli("render", str(_design(tmp_path, "eos.yaml", EOS)), "-o", str(out))[0] == 0
    write_atomic(tmp_path / "bom.json", "{}")
    assert sorted(os.listdir(tmp_path)) == ["bom.json", "eos.yaml", "out"]


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


# ---------------------------------------------------------------- kills

def _run_killed(work: Callable[[], None], delay: float | None, kill_at_op: int | None = None) -> None:
    """Run `work` in a forked child and SIGKILL it after `delay` seconds, or at its `kill_at_op`-th
    file-system operation (the child kills itself there: every step of the write is a kill point)."""
    pid = os.fork()
    if pid == 0:
        try:
            if kill_at_op is not None:
                _count_ops(lambda n: os.kill(os.getpid(), signal.SIGKILL) if n == kill_at_op else None)
            work()
        finally:
            os._exit(0)
    if delay is not None:
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _count_ops(each: Callable[[int], None]) -> list[int]:
    """Wrap every call that changes the file system during a write; `each(n)` runs before call n."""
    import shutil

    import validator.emit.files as files

    count = [0]

    def wrap(owner: object, name: str) -> None:
        real = getattr(owner, name)

        def counted(*args: object, **kwargs: object) -> object:
            count[0] += 1
            each(count[0])
            return real(*args, **kwargs)

        setattr(owner, name, counted)

    for name in ("fsync", "rename", "replace", "link", "symlink", "mkdir", "unlink", "chmod"):
        wrap(os, name)
    wrap(shutil, "rmtree")
    wrap(files, "_exchange")
    return count


def _ops_of(work: Callable[[], None]) -> int:
    """How many file-system operations `work` makes (counted in a child, passed back by a pipe)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        count = _count_ops(lambda n: None)
        work()
        os.write(write, str(count[0]).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as fh:
        return int(fh.read())


def _timed(work: Callable[[], None]) -> float:
    start = time.perf_counter()
    _run_killed(work, None)
    return time.perf_counter() - start


def _restore(directory: Path, tree: dict[str, bytes]) -> None:
    """Put `directory` back to exactly `tree` (faster than rendering it again)."""
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
    for rel, data in tree.items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_bytes(data)


def _kill_points(work: Callable[[], None], seed: int) -> list[tuple[float | None, int | None]]:
    """Every file-system operation of `work` as a kill point, one past the last (the run completes), and
    20 SIGKILLs at random moments of its run."""
    ops, rng = _ops_of(work), random.Random(seed)
    duration = _timed(work)
    return [(None, k) for k in range(1, ops + 2)] + [(rng.uniform(0, duration), None) for _ in range(20)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_render_killed_at_any_moment_leaves_the_old_or_the_new_set(tmp_path):
    """The writing part of `render` (render_all: templates, BOM, cabling, the set swap) in a forked child,
    killed at each of its file-system operations and at 20 random moments."""
    from validator.emit.render import render_all

    old, new = analyze(_design(tmp_path, "eos.yaml", SMALL_EOS)), analyze(_design(tmp_path, "sonic.yaml", SMALL))
    sets = {}
    for name, analysis in (("old", old), ("new", new)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.txt").write_text("mine")
        render_all(analysis, tmp_path / name)
        sets[name] = _tree(tmp_path / name)
    assert sets["old"].keys() != sets["new"].keys()
    out = tmp_path / "out"

    def work() -> None:
        render_all(new, out)

    _restore(out, sets["old"])
    kills, seen = _kill_points(work, 16), set()
    for delay, op in kills:
        _restore(out, sets["old"])
        _run_killed(work, delay, op)
        state = _tree(out)
        assert state in (sets["old"], sets["new"]), f"a mixed set after a kill at {delay or op}"
        seen.add("new" if state == sets["new"] else "old")
    assert seen == {"old", "new"} and len(kills) >= 20 + 10
    render_all(new, out)         # the next run removes what killed ones left beside the set
    assert sorted(os.listdir(tmp_path)) == ["eos.yaml", "new", "old", "out", "sonic.yaml"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_bom_xlsx_killed_at_any_moment_leaves_the_old_or_the_new_workbook(tmp_path):
    """The writing part of `bom --format xlsx -o` (the workbook built and written) in a forked child."""
    from validator.commands.build import _workbook
    from validator.commands.common import emit

    designs = {n: _design(tmp_path, f"{n}.yaml", t) for n, t in (("old", SMALL_EOS), ("new", SMALL))}
    analyses = {n: analyze(p) for n, p in designs.items()}
    books = {n: _workbook(designs[n], analyses[n], "2026-12-01T00:00:00", "bom") for n in designs}
    assert books["old"] != books["new"]
    target = tmp_path / "out" / "bom.xlsx"

    def work() -> None:
        emit(_workbook(designs["new"], analyses["new"], "2026-12-01T00:00:00", "bom"), target)

    write_atomic(target, books["old"])
    kills, seen = _kill_points(work, 17), set()
    for delay, op in kills:
        write_atomic(target, books["old"])
        _run_killed(work, delay, op)
        data = target.read_bytes()
        assert data in (books["old"], books["new"]), f"a broken workbook after a kill at {delay or op}"
        seen.add("new" if data == books["new"] else "old")
    assert seen == {"old", "new"} and len(kills) >= 20
    write_atomic(target, books["old"])       # the next write removes what killed ones left
    assert os.listdir(target.parent) == ["bom.xlsx"]


def test_output_set_refuses_paths_out_of_the_set(tmp_path):
    with OutputSet(tmp_path / "out") as out:
        for bad in ("../x", "/etc/x", "a/../../x", "", MANIFEST):
            with pytest.raises(ValueError):
                out.write(bad, "x")
    assert not (tmp_path / "out").exists() and os.listdir(tmp_path) == []


# ---------------------------------------------------------------- outputs

@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "good.yaml").write_text(SMALL)
    (tmp_path / "bad.yaml").write_text(FAILING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _declare(repo: Path, *entries: str) -> None:
    (repo / ".clusterplan.yaml").write_text("outputs:\n" + "".join(f"  - {e}\n" for e in entries))


def test_outputs_write_nothing_while_a_design_has_errors(repo):
    _declare(repo, "{design: good.yaml, bom: gen/good.json}", "{design: bad.yaml, bom: gen/bad.json}")
    code, out, err = cli("outputs")
    assert code == 1 and out == "" and not (repo / "gen").exists()
    assert err.splitlines()[-1] == ("clusterplan: error: bad.yaml: error findings; nothing is written for a design "
                                    "that fails validation (fix it, or pass --force to write anyway)")
    code, out, err = cli("outputs", "--force")
    assert code == 1 and "regenerated: gen/bad.json" in out and (repo / "gen" / "good.json").is_file()
    assert err == "clusterplan: outputs of bad.yaml written despite its error findings (--force)\n"


def test_outputs_remove_what_they_no_longer_produce_and_nothing_else(repo):
    _declare(repo, "{design: good.yaml, bom: gen/good.json, cabling: gen/good.csv, render: gen/good}")
    assert cli("outputs")[0] == 1
    (repo / "gen" / "notes.txt").write_text("mine")
    (repo / "gen" / "good" / "README").write_text("mine too")
    _declare(repo, "{design: good.yaml, bom: gen/good.json}")
    code, out, _ = cli("outputs")
    assert code == 1 and out == ("removed: gen/good\nremoved: gen/good.csv\nregenerated: .clusterplan-outputs.json\n")
    assert sorted(_tree(repo / "gen")) == ["good.json", "good/README", "notes.txt"]
    assert cli("outputs") == (0, "", "")


def test_outputs_never_overwrite_a_file_they_did_not_write(repo):
    (repo / "gen").mkdir()
    (repo / "gen" / "good.json").write_text("hand-written")
    _declare(repo, "{design: good.yaml, bom: gen/good.json}")
    code, _, err = cli("outputs")
    assert code == 2 and (repo / "gen" / "good.json").read_text() == "hand-written"
    assert err == ("clusterplan: error: gen/good.json exists and clusterplan did not write it (it is not in "
                   ".clusterplan-outputs.json); move it away or declare another path\n")


def test_outputs_honour_the_design_templates_as_render_does(repo):
    (repo / "tpl" / "sonic").mkdir(parents=True)
    (repo / "tpl" / "sonic" / "config_db.json.j2").write_text('{"host": {{ d.name | tojson }}}')
    (repo / "good.yaml").write_text(SMALL.replace("kind: InferenceFleet", "kind: InferenceFleet\ntemplates: tpl"))
    _declare(repo, "{design: good.yaml, render: gen/good}")
    assert cli("outputs")[0] == 1
    assert cli("render", "good.yaml", "-o", "rendered")[0] == 0
    name = "configs/compute/compute-leaf0001.config_db.json"
    assert (repo / "gen" / "good" / name).read_text() == '{"host": "compute-leaf0001"}\n' == \
        (repo / "rendered" / name).read_text()


def test_a_set_is_never_swapped_over_a_repository_or_the_working_directory(tmp_path, monkeypatch):
    design = _design(tmp_path, "d.yaml", SMALL)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    code, _, err = cli("render", str(design), "-o", str(tmp_path / "repo"))
    assert code == 2 and "is a repository or holds the working directory" in err
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("render", "d.yaml", "-o", ".")
    assert code == 2 and "is a repository or holds the working directory" in err
    assert sorted(os.listdir(tmp_path)) == ["d.yaml", "repo"]
