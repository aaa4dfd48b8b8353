"""The GitHub Action and the example workflow: pinned, least-privilege, zizmor- and shellcheck-clean,
and a gate that gates: the diff step's exit code reaches the job, which fails naming the gate."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import ROOT

ACTION = ROOT / "action.yml"
EXAMPLE = ROOT / "docs" / "examples" / "clusterplan-pr.yml"
SHA = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def _bin(name: str) -> str:
    exe = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    assert exe, f"{name} is a test dependency (pyproject.toml [test])"
    return exe


def _steps(path: Path) -> list[dict]:
    doc = yaml.safe_load(path.read_text())
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job["steps"]]


def test_zizmor_finds_nothing_even_pedantic():
    proc = subprocess.run([_bin("zizmor"), "--offline", "--persona", "pedantic", str(ACTION), str(EXAMPLE)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "No findings" in proc.stdout, proc.stdout + proc.stderr


def test_actionlint_checks_the_example_with_shellcheck():
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(_bin("shellcheck")).parent), os.environ["PATH"]])}
    proc = subprocess.run([_bin("actionlint"), str(EXAMPLE)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", [ACTION, EXAMPLE], ids=["action", "example"])
def test_every_action_is_pinned_by_full_commit_sha(path):
    uses = [s["uses"] for s in _steps(path) if "uses" in s]
    assert uses
    for ref in uses:
        assert SHA.match(ref), f"{path.name}: {ref} is not pinned to a 40-hex commit"


def test_example_has_least_privilege_and_no_persisted_credentials():
    doc = yaml.safe_load(EXAMPLE.read_text())
    assert doc["permissions"] == {}
    job = next(iter(doc["jobs"].values()))
    assert job["permissions"] == {"contents": "read", "security-events": "write", "pull-requests": "write"}
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


def test_action_scripts_pass_shellcheck_and_never_swallow_an_exit_code(tmp_path):
    for step in _steps(ACTION):
        if "run" not in step:
            continue
        assert "${{" not in step["run"], f"{step['name']}: expressions go through env, not into the script"
        assert "|| true" not in step["run"], f"{step['name']}: swallows an exit code"
        script = tmp_path / "step.sh"
        script.write_text(step["run"])
        proc = subprocess.run([_bin("shellcheck"), "-s", "bash", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{step['name']}:\n{proc.stdout}"


def _run_step(name: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    step = next(s for s in _steps(ACTION) if s["name"] == name)
    full = {**os.environ, **env, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True)


def _outputs(path: Path) -> dict[str, str]:
    text = path.read_text()
    out = dict(re.findall(r"^(\w[\w-]*)=(.*)$", text, re.M))
    for key, _delimiter, body in re.findall(r"^(\w[\w-]*)<<(\w+)\n(.*?)\n\2$", text, re.M | re.S):
        out[key] = body
    return out


@pytest.fixture
def pr_repo(tmp_path):
    """A design repository with a base branch on an `origin` remote and a head that doubles the GPUs."""
    design = (ROOT / "tests" / "fixtures" / "valid" / "small-training.yaml").read_text()
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    (work / "designs").mkdir()
    (work / "designs" / "d.yaml").write_text(design)
    for args in (["add", "."], ["commit", "-qm", "base"], ["remote", "add", "origin", str(origin)],
                 ["push", "-q", "origin", "main"]):
        subprocess.run([*git, *args], cwd=work, check=True)
    count = re.search(r"^  count: (\d+)$", design, re.M)
    assert count
    (work / "designs" / "d.yaml").write_text(design.replace(count.group(0), f"  count: {2 * int(count.group(1))}"))
    return work


@pytest.mark.parametrize(("gate", "trips"), [("gpus > +50%", True), ("gpus > +150%", False)])
def test_the_job_fails_when_a_gate_trips_and_names_it(pr_repo, tmp_path, gate, trips):
    out, summary = tmp_path / "out", tmp_path / "summary"
    env = {"BASE_REF": "main", "PATHS": "designs/", "FAIL_IF": f"{gate}\n\n",
           "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    diff = _run_step("Diff against the base", env, pr_repo)
    assert diff.returncode == 0, diff.stderr
    outputs = _outputs(out)
    assert outputs["status"] == ("1" if trips else "0")
    assert "clusterplan: design changes" in summary.read_text()
    gate_env = {"VALIDATE": "0", "DIFF": outputs["status"], "TRIPPED": outputs.get("tripped", ""), "FAIL_ON": "error"}
    final = _run_step("Fail on findings or tripped gates", gate_env, pr_repo)
    assert final.returncode == (1 if trips else 0)
    if trips:   # the gate as the summary shows it (Markdown-escaped), as workflow-command data (% is %25)
        shown = gate.replace(">", "\\>").replace("%", "%25")
        assert f"::error title=clusterplan diff gate tripped::designs/d.yaml: gpus changed +100.0%25 ({shown})" \
            in final.stdout


def test_the_job_fails_on_findings_and_on_a_broken_diff(tmp_path):
    final = _run_step("Fail on findings or tripped gates", {"VALIDATE": "1", "DIFF": "", "TRIPPED": "",
                                                            "FAIL_ON": "warning"}, tmp_path)
    assert final.returncode == 1 and "findings at or above 'warning'" in final.stdout
    final = _run_step("Fail on findings or tripped gates", {"VALIDATE": "0", "DIFF": "2", "TRIPPED": "",
                                                            "FAIL_ON": "error"}, tmp_path)
    assert final.returncode == 1 and "the diff against the base failed (exit 2)" in final.stdout


@pytest.mark.parametrize(("existing", "method"), [("", "POST"), ("4242", "PATCH")])
def test_one_pull_request_comment_updated_in_place(tmp_path, existing, method):
    """The comment step finds its own comment by a marker: it edits that one, or posts the first."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gh").write_text(f'#!/usr/bin/env bash\necho "$@" >> "{tmp_path}/calls"\n'
                             f'case "$*" in *--paginate*) echo "{existing}";; esac\n')
    (fake / "gh").chmod(0o755)
    (tmp_path / "clusterplan-diff.md").write_text("## clusterplan: design changes\n| capex | +12% |\n")
    env = {"GH_TOKEN": "t", "REPO": "o/r", "PR": "7", "ERRORS": "0", "WARNINGS": "2",
           "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    step = next(s for s in _steps(ACTION) if s["name"] == "Comment on the pull request")
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env={**os.environ, **env},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 2 and "--paginate repos/o/r/issues/7/comments" in calls[0]
    target = "repos/o/r/issues/comments/4242" if existing else "repos/o/r/issues/7/comments"
    assert calls[1].startswith(f"api --method {method} {target} -F body=@clusterplan-comment.md")
    body = (tmp_path / "clusterplan-comment.md").read_text()
    assert body.startswith("<!-- clusterplan-pr-comment -->\n### clusterplan: 0 error(s), 2 warning(s)")
    assert "| capex | +12% |" in body
