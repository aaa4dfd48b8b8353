"""Progress of long commands (issue 33): on a terminal a display per stage on stderr (read/resolve/expand,
derive and check, each output, with counts), on CI plain lines, never anything on stdout, and nothing
with --quiet. The delay before progress shows (2 s) is set to 0 here (CLUSTERPLAN_PROGRESS_AFTER), so
a small design shows every stage; no test depends on how long anything takes."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys

from tests.helpers import FIXTURES, ROOT

DESIGN = FIXTURES / "valid" / "small-training.yaml"
MAIN = "from validator.commands import main; main()"
ESCAPE = re.compile("[\x1b\x07\r]")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "GITHUB_ACTIONS", "CLUSTERPLAN_NO_PROGRESS", "NO_COLOR", "CLUSTERPLAN_DEBUG")}
    return {**env, "CLUSTERPLAN_PROGRESS_AFTER": "0", "TERM": "xterm-256color", "COLUMNS": "120", **extra}


def _on_terminal(*args: str, **env: str) -> tuple[int, str, str]:
    """Run clusterplan with stderr on a pseudo-terminal and stdout on a pipe: (exit, stdout, terminal)."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-c", MAIN, *args], cwd=ROOT, env=_env(**env), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    assert child.stdout is not None
    seen, out = b"", b""
    streams = [leader, child.stdout.fileno()]
    while streams:
        for fd in select.select(streams, [], [], 60)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:      # the terminal's other end closed (Linux: EIO)
                chunk = b""
            if not chunk:
                streams.remove(fd)
            elif fd == leader:
                seen += chunk
            else:
                out += chunk
    os.close(leader)
    return child.wait(60), out.decode(), seen.decode(errors="replace")


def test_render_on_a_terminal_shows_each_stage_with_counts(tmp_path):
    code, out, terminal = _on_terminal("render", str(DESIGN), "-o", str(tmp_path / "out"))
    assert code == 0 and out == ""
    for stage in ("read, resolve, expand", "derive and check", "configurations (switches)", "BOM", "cabling",
                  "files to disk"):
        assert stage in terminal, stage
    assert "\x1b[" in terminal                  # drawn by rich, not printed as lines
    links = sum(1 for _ in (tmp_path / "out" / "cabling.csv").open()) - 1
    assert f"{links}/{links}" in terminal       # the cabling plan counted to its last link
    done = re.findall(r"configurations \(switches\)\S*\s.*?(\d+)/(\d+)", terminal)
    assert done and done[-1][0] == done[-1][1] != "0"


def test_json_on_stdout_stays_clean_while_the_terminal_shows_progress():
    code, out, terminal = _on_terminal("bom", str(DESIGN), "--format", "json")
    assert code == 0 and "derive and check" in terminal and "\x1b[" in terminal
    quiet = subprocess.run([sys.executable, "-c", MAIN, "bom", str(DESIGN), "--format", "json", "--quiet"], cwd=ROOT,
                           env=_env(), capture_output=True, text=True, timeout=120)
    assert out == quiet.stdout and not ESCAPE.search(out) and json.loads(out)["items"]


def test_quiet_shows_nothing(tmp_path):
    code, out, terminal = _on_terminal("render", str(DESIGN), "-o", str(tmp_path / "out"), "--quiet")
    assert out == ""
    assert code == 0 and "\x1b[" not in terminal and "derive and check" not in terminal
    assert terminal.strip().startswith("wrote ") and "files under" in terminal


def test_ci_gets_plain_lines_on_stderr_and_clean_json_on_stdout():
    done = subprocess.run([sys.executable, "-c", MAIN, "estimate", str(DESIGN), "--format", "json"], cwd=ROOT,
                          env=_env(GITHUB_ACTIONS="true"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout) and not ESCAPE.search(done.stdout)
    lines = done.stderr.splitlines()
    assert any(re.fullmatch(r"clusterplan: \S*small-training\.yaml: derive and check \(\d+ s\) done", x) for x in lines)
    assert not ESCAPE.search(done.stderr) and all(x.startswith("clusterplan: ") for x in lines)


def test_nothing_shows_before_the_delay():
    done = subprocess.run([sys.executable, "-c", MAIN, "validate", str(DESIGN)], cwd=ROOT,
                          env=_env(GITHUB_ACTIONS="true", CLUSTERPLAN_PROGRESS_AFTER="3600"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "clusterplan: " not in done.stderr
