"""What a pull request author controls besides the design's values (issue 29, docs/security.md): file
names, catalog free text, repository templates, `.clusterplan.yaml` and the manifests; and the CI
runner's channels (stdout, job summary, pull-request comment, annotations, $GITHUB_OUTPUT). Each class
runs through the real CLI and asserts the defended behaviour."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from tests.helpers import FIXTURES, cli
from validator.resolve.catalog import DATA_DIR

SMALL = (FIXTURES / "valid" / "small-inference.yaml").read_text()
RUNNER_COMMAND = re.compile(r"^\s*::|##\[", re.M)       # what a GitHub runner executes from a log line
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
FORGE = "x\n::error file=a,line=1::forged\n##[set-output name=ok;]true\n\x1b[2J"


def _override(repo: Path, file: str, entry_id: str, **fields: str) -> str:
    entries = yaml.safe_load((DATA_DIR / f"{file}.yaml").read_text())["entries"]
    entry = {**next(e for e in entries if e["id"] == entry_id), **fields}
    (repo / f"{entry_id}.catalog.yaml").write_text(yaml.safe_dump({"kind": "switch" if file == "switches" else
                                                                   "server", "entries": [entry]}))
    return f"{entry_id}.catalog.yaml"


def _design(repo: Path, *catalogs: str, text: str = SMALL, name: str = "d.yaml") -> Path:
    (repo / ".git").mkdir(exist_ok=True)
    listed = f"\ncatalogs: [{', '.join(catalogs)}]" if catalogs else ""
    (repo / name).write_text(text.replace("\nmetadata:", f"{listed}\nmetadata:", 1))
    return repo / name


# ------------------------------------------------------------------ every channel escaped


def test_rfq_and_repository_templates_cannot_write_a_workflow_command_to_stdout(tmp_path):
    path = _design(tmp_path, _override(tmp_path, "switches", "sn2201", name=FORGE, vendor=FORGE))
    (tmp_path / "tpl" / "bom").mkdir(parents=True)
    (tmp_path / "tpl" / "bom" / "x.j2").write_text("::add-mask::{{ 'x' }}\n  ::warning::y\n##[error]z\x1b[31m\n")
    path.write_text(path.read_text().replace("kind: InferenceFleet", "kind: InferenceFleet\ntemplates: tpl"))
    for args in (("--format", "rfq"), ("--template", "x"), ("--format", "md"), ("--format", "json"),
                 ("--format", "csv"), ("--format", "text")):
        code, out, err = cli("bom", str(path), *args)
        assert code == 0, err
        assert not RUNNER_COMMAND.search(out) and not RAW_CONTROL.search(out), args
    items = json.loads(cli("bom", str(path), "--format", "json")[1],
                       parse_constant=lambda c: pytest.fail(f"JSON holds {c}"))["items"]
    assert next(i for i in items if i["part"] == "sn2201")["description"] == FORGE    # JSON: the text, exactly
    code, out, _ = cli("bom", str(path), "--template", "x")
    assert out.splitlines()[:3] == ["\\x3a:add-mask::x", "  \\x3a:warning::y", "#\\x23[error]z\\x1b[31m"]


def _git_repo(root: Path) -> list[str]:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    return git


def _commit(git: list[str], root: Path, message: str) -> None:
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", message], cwd=root, check=True)


HOSTILE_NAMES = ['désign "q".yaml', "tab\there.yaml", "![x](http:evil.example) <img src=x> @org | `c`.yaml",
                 "line\n::error::forged.yaml"]


@pytest.fixture
def pr(tmp_path, monkeypatch):
    """A repository whose base has four designs with hostile names; the head doubles each one's servers."""
    git = _git_repo(tmp_path)
    for name in HOSTILE_NAMES:
        (tmp_path / name).write_text(SMALL)
    _commit(git, tmp_path, "base")
    for name in HOSTILE_NAMES:
        (tmp_path / name).write_text(SMALL.replace("  count: 2\n", "  count: 4\n", 1))
    monkeypatch.chdir(tmp_path)
    return git


def test_diff_sees_every_changed_design_whatever_git_would_quote(pr):
    code, out, _ = cli("diff", "--git-ref", "main", "--format", "json", "--fail-if", "gpus > +50%")
    data = json.loads(out)
    assert code == 1 and len(data["designs"]) == len(HOSTILE_NAMES) == len(data["gates_tripped"])
    assert all(d["metrics"]["gpus"]["relative"] == 1.0 for d in data["designs"])   # 2 -> 4 servers: +100 %


def test_diff_text_and_markdown_show_hostile_file_names_as_text(pr):
    code, out, _ = cli("diff", "--git-ref", "main", "--fail-if", "gpus > +50%")
    assert code == 1 and not RUNNER_COMMAND.search(out) and not RAW_CONTROL.search(out)
    assert "line\\x0a::error::forged.yaml (changed)" in out and "tab\\x09here.yaml (changed)" in out
    code, out, _ = cli("diff", "--git-ref", "main", "--format", "md", "--fail-if", "gpus > +50%")
    assert code == 1 and not RUNNER_COMMAND.search(out) and not RAW_CONTROL.search(out)
    prose = re.sub(r"`[^`\n]*`", "", out)     # code spans show their text as it is: no markup there
    assert not re.search(r"(?<!\\)!(?<!\\)\[|(?<!\\)<img|(?<!\\)@org", prose)
    table = [line for line in out.splitlines() if line.startswith("| `")]
    header = next(line for line in out.splitlines() if line.startswith("| design |"))
    assert len(table) == 4 and all(row.count(" | ") == header.count(" | ") for row in table)
    gates = out.split("**Gates tripped:**\n")[1].split("\n\n")[0].splitlines()
    assert len(gates) == 4 and all(g.startswith("- ") and "\n" not in g for g in gates)


def test_validate_summary_table_keeps_its_columns_with_a_pipe_in_a_file_name(tmp_path):
    path = _design(tmp_path, name="a|b`c.yaml", text=SMALL + "unknown_key: 1\n")
    code, out, _ = cli("validate", str(path), "--format", "md")
    rows = [line for line in out.splitlines() if "unknown key" in line]
    assert code == 1 and rows and all(row.replace("\\|", "").count("|") == 5 for row in rows)


def _action_step(name: str) -> str:
    steps = yaml.safe_load((Path(__file__).parent.parent / "action.yml").read_text())["runs"]["steps"]
    return next(s["run"] for s in steps if s["name"] == name)


def test_action_output_heredoc_delimiter_is_random_per_run(pr, tmp_path):
    """A tripped gate names a hostile file; it can neither end the `tripped` value early (the delimiter is
    random, the name one escaped line) nor add an output."""
    import os
    import sys

    env = {**os.environ, "BASE_REF": "main", "PATHS": ".", "FAIL_IF": "gpus > +50%",
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    delimiters = []
    for run in range(2):
        out, summary = tmp_path / f"out{run}", tmp_path / f"summary{run}"
        script = _action_step("Diff against the base").replace(
            'if ! git rev-parse --verify --quiet "origin/$BASE_REF^{commit}" > /dev/null; then', "if false; then"
        ).replace('"origin/$BASE_REF"', '"$BASE_REF"')
        proc = subprocess.run(["bash", "-e", "-c", script], env={**env, "GITHUB_OUTPUT": str(out),
                              "GITHUB_STEP_SUMMARY": str(summary)}, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        text = out.read_text()
        found = re.search(r"^tripped<<(\S+)\n(.*?)\n\1\n", text, re.M | re.S)
        assert found, text
        delimiters.append(found.group(1))
        assert len(found.group(2).splitlines()) == 4 and text.count("\n") == 1 + 6   # status, tripped + 4 + end
    assert re.fullmatch(r"CLUSTERPLAN_[0-9a-f]{32}", delimiters[0]) and delimiters[0] != delimiters[1]


def test_junit_stays_valid_xml_with_noncharacters(tmp_path):
    path = _design(tmp_path, name="d\ufffe\uffff.yaml", text=SMALL + "unknown_key: 1\n")
    code, out, _ = cli("validate", str(path), "--format", "junit")
    assert code == 1 and "d\\ufffe\\uffff.yaml" in out and "\ufffe" not in out
    ElementTree.fromstring(out.encode("utf-8"))       # raises on a character XML does not allow


def _bom_cell(book: Path, part: str):
    from openpyxl import load_workbook

    return next(r[2] for r in load_workbook(book)["BOM"].iter_rows(min_row=2) if r[1].value == part)


def test_workbook_stays_valid_xml_and_decides_the_formula_prefix_after_stripping(tmp_path):
    path = _design(tmp_path, _override(tmp_path, "servers", "dgx-h200", name="evil\ufffe\uffff\x01=1+1"))
    assert cli("bom", str(path), "--format", "xlsx", "-o", str(tmp_path / "b.xlsx"))[0] == 0
    with zipfile.ZipFile(tmp_path / "b.xlsx") as book:
        for member in book.namelist():
            if member.endswith(".xml"):
                ElementTree.fromstring(book.read(member))
    cell = _bom_cell(tmp_path / "b.xlsx", "dgx-h200")
    assert (cell.value, cell.data_type) == ("evil=1+1", "s")
    _override(tmp_path, "servers", "dgx-h200", name="\x01=1+1")     # = first once the control is gone
    assert cli("bom", str(path), "--format", "xlsx", "-o", str(tmp_path / "c.xlsx"))[0] == 0
    cell = _bom_cell(tmp_path / "c.xlsx", "dgx-h200")
    assert (cell.value, cell.data_type, cell.quotePrefix) == ("=1+1", "s", True)
    code, out, _ = cli("bom", str(path), "--format", "csv")
    assert code == 0
    assert next(r for r in csv.DictReader(io.StringIO(out)) if r["part"] == "dgx-h200")["description"] == "'=1+1"


def test_vendors_whose_names_normalise_alike_get_one_rfq_each(tmp_path):
    path = _design(tmp_path, _override(tmp_path, "switches", "sn2201", vendor="Acme Inc"),
                   _override(tmp_path, "switches", "sonic-th5-64x800", vendor="acme, inc."))
    code, _, err = cli("bom", str(path), "--format", "rfq", "-o", str(tmp_path / "rfq"))
    assert code == 0, err
    files = {p.name: p.read_text() for p in (tmp_path / "rfq").glob("rfq-acme*.md")}
    assert sorted(files) == ["rfq-acme-inc-2.md", "rfq-acme-inc.md"]
    assert "sonic-th5-64x800" in files["rfq-acme-inc-2.md"] and "sn2201" in files["rfq-acme-inc.md"]
    assert "sn2201" not in files["rfq-acme-inc-2.md"]


def test_overflowing_prices_are_unknown_never_inf_or_past_excel(tmp_path, monkeypatch):
    """1e308 per server, two servers: the extended price overflows to infinity."""
    path = _design(tmp_path)
    monkeypatch.chdir(tmp_path)
    book = tmp_path / "book.yaml"
    book.write_text("pricebook: 1\nname: hostile\ncurrency: USD\ndate: 2026-12\nsource: a pull request\n"
                    "confidence: quote\nprices:\n  dgx-h200: {price: 1.0e+308}\n")
    for fmt in ("text", "md", "rfq", "procurement"):
        code, out, err = cli("bom", str(path), "--format", fmt, "--prices", str(book))
        assert code == 0, err
        assert "inf" not in out.lower().replace("infiniband", "") and "nan" not in out.lower().split(), fmt
        assert "unknown" in out or fmt == "procurement"
    code, out, _ = cli("bom", str(path), "--format", "json", "--prices", str(book))
    json.loads(out, parse_constant=lambda c: pytest.fail(f"JSON holds {c}"))
    assert cli("bom", str(path), "--format", "xlsx", "-o", str(tmp_path / "b.xlsx"), "--prices", str(book))[0] == 0
    from openpyxl import load_workbook

    numbers = [c.value for ws in load_workbook(tmp_path / "b.xlsx").worksheets for row in ws.iter_rows()
               for c in row if isinstance(c.value, float)]
    assert numbers and max(abs(n) for n in numbers) <= 9.99999999999999e307


# ------------------------------------------------------------------ gates that cannot be bypassed


def test_weakening_the_repository_configuration_is_reported_and_can_gate(tmp_path, monkeypatch):
    git = _git_repo(tmp_path)
    (tmp_path / "d.yaml").write_text(SMALL)
    (tmp_path / ".clusterplan.yaml").write_text("severity: {TRN009: error}\n")
    _commit(git, tmp_path, "base")
    (tmp_path / ".clusterplan.yaml").write_text(
        'severity: {NET001: "off", TRN009: warning}\n'
        'waivers:\n  - {rule: NET002, reason: "![x](http://evil.example) ::error::x", owner: "@org/team"}\n')
    monkeypatch.chdir(tmp_path)
    lines = [".clusterplan.yaml: severity of NET001 turned off",
             ".clusterplan.yaml: severity of TRN009 lowered from error to warning",
             ".clusterplan.yaml: waiver added for NET002 (owner @org/team): ![x](http://evil.example) ::error::x"]
    code, out, _ = cli("diff", "--git-ref", "main", "--format", "json")
    assert code == 0 and json.loads(out)["config_weakened"] == lines and json.loads(out)["gates_tripped"] == []
    code, out, _ = cli("diff", "--git-ref", "main")
    assert code == 0 and out.splitlines()[:3] == [f"config weakened: {line}" for line in lines]
    code, out, _ = cli("diff", "--git-ref", "main", "--format", "md", "--fail-if", "config-weakened")
    assert code == 1 and "**Repository configuration weakened**" in out and "\\!\\[x\\]" in out
    gates = out.split("**Gates tripped:**\n")[1].split("\n\n")[0].splitlines()
    assert len(gates) == 3 and all(g.endswith("(config-weakened)") for g in gates)
    (tmp_path / ".clusterplan.yaml").write_text("severity: {TRN009: error, TRN002: error}\n")   # stricter: fine
    code, out, _ = cli("diff", "--git-ref", "main", "--fail-if", "config-weakened")
    assert code == 0 and "config weakened" not in out


# ------------------------------------------------------------------ nothing under .git/, nothing undeclared


@pytest.fixture
def outputs_repo(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "README.md").write_text("# read me\n")
    (tmp_path / "d.yaml").write_text(SMALL)
    (tmp_path / ".clusterplan.yaml").write_text("outputs:\n  - {design: d.yaml, bom: gen/d.json}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_pull_request_manifest_cannot_make_outputs_remove_what_clusterplan_did_not_write(outputs_repo):
    root = outputs_repo
    listed = {"README.md": _sha(root / "README.md"), "d.yaml": _sha(root / "d.yaml"), "README.txt": "file"}
    (root / "README.txt").write_text("notes\n")
    (root / ".clusterplan-outputs.json").write_text(json.dumps({"outputs": listed}))
    code, _, err = cli("outputs")
    assert code == 1 and "kept README.md" in err and "kept d.yaml" in err
    assert (root / "README.md").read_text() == "# read me\n" and (root / "d.yaml").read_text() == SMALL
    assert (root / "README.txt").exists() and (root / "gen" / "d.json").exists()
    assert set(json.loads((root / ".clusterplan-outputs.json").read_text())["outputs"]) == {"gen/d.json"}
    # what clusterplan did write, and still holds what it wrote, goes when no longer declared
    (root / ".clusterplan.yaml").write_text("outputs:\n  - {design: d.yaml, bom: gen/e.json}\n")
    assert cli("outputs")[0] == 1 and not (root / "gen" / "d.json").exists() and (root / "gen" / "e.json").exists()


def test_a_pull_request_render_manifest_cannot_drop_a_file_from_the_set(outputs_repo):
    root = outputs_repo
    (root / "out").mkdir()
    (root / "out" / "notes.txt").write_text("mine\n")
    for digest in ("0" * 64, _sha(root / "out" / "notes.txt")):
        (root / "out" / ".clusterplan-manifest.json").write_text(json.dumps({"files": {"notes.txt": digest}}))
        code, _, err = cli("render", "d.yaml", "-o", "out")
        assert code == 0, err
        if digest == "0" * 64:     # not what the manifest says clusterplan wrote: somebody else's, kept
            assert (root / "out" / "notes.txt").read_text() == "mine\n"
    # with its true hash a file is indistinguishable from one clusterplan wrote there; it goes with the old set
    assert not (root / "out" / "notes.txt").exists() and (root / "out" / "bom.json").exists()


def test_a_pull_request_cannot_make_outputs_overwrite_a_file_it_lists_with_its_true_hash(outputs_repo):
    """Found by the repository fuzzer: README.md declared as an output and listed in a forged manifest
    with its true hash."""
    root = outputs_repo
    (root / ".clusterplan.yaml").write_text("outputs:\n  - {design: d.yaml, bom: README.md}\n")
    (root / ".clusterplan-outputs.json").write_text(json.dumps({"outputs": {"README.md": _sha(root / "README.md")}}))
    code, _, err = cli("outputs")
    assert code == 2 and "README.md exists and clusterplan did not write it" in err
    assert (root / "README.md").read_text() == "# read me\n"


@pytest.mark.parametrize("entry", [".git/config", ".GIT/config", "sub/../.git/config", "link/config"])
def test_outputs_never_remove_anything_under_git(outputs_repo, entry):
    root = outputs_repo
    (root / "link").symlink_to(root / ".git")
    (root / ".clusterplan-outputs.json").write_text(json.dumps({"outputs": {entry: _sha(root / ".git" / "config")}}))
    code, _, err = cli("outputs")
    assert code == 2 and (root / ".git" / "config").read_text() == "[core]\n"
    assert "inside .git/" in err or "not a relative path" in err


@pytest.mark.parametrize("declared", [".git/hooks/x.json", "link/x.json", ".git"])
def test_output_sets_declared_inside_git_are_refused(outputs_repo, declared):
    root = outputs_repo
    (root / "link").symlink_to(root / ".git")
    kind = "render" if declared == ".git" else "bom"
    (root / ".clusterplan.yaml").write_text(f"outputs:\n  - {{design: d.yaml, {kind}: {declared}}}\n")
    code, _, err = cli("outputs")
    assert code == 2 and "is inside .git/" in err and sorted(p.name for p in (root / ".git").iterdir()) == ["config"]


def test_a_committed_directory_or_symlink_where_an_output_goes_is_a_clear_error(outputs_repo):
    root = outputs_repo
    (root / "gen" / "d.json").mkdir(parents=True)
    code, _, err = cli("outputs")
    assert code == 2 and "gen/d.json is a directory; a declared output is written only as a regular file" in err
    (root / "gen" / "d.json").rmdir()
    (root / "gen" / "d.json").symlink_to(root / "README.md")
    code, _, err = cli("outputs")
    assert code == 2 and "internal error" not in err and (root / "README.md").read_text() == "# read me\n"
    (root / "out" / "bom.csv").mkdir(parents=True)
    (root / "out" / "bom.csv" / "mine.txt").write_text("mine")
    code, _, err = cli("render", "d.yaml", "-o", "out")
    assert code == 2 and "stands where an output goes" in err and (root / "out" / "bom.csv" / "mine.txt").exists()


def test_a_directory_tree_1100_levels_deep_is_walked(tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    try:
        for _ in range(1100):
            os.mkdir("a")
            os.chdir("a")
        Path("d.yaml").write_text(SMALL)
        monkeypatch.chdir(tmp_path)
        code, out, err = cli("validate", ".")
        assert code == 0 and "1 design checked" in out, err
    finally:
        _take_apart(tmp_path)


def _take_apart(root: Path) -> None:
    """Remove the tree level by level (shutil.rmtree, and pytest's clean-up, recurse on Python 3.11)."""
    top, hold = root / "a", root / "hold"
    while top.exists():
        for entry in top.iterdir():
            if entry.name != "a":
                entry.unlink()
        if (top / "a").exists():
            (top / "a").rename(hold)
            top.rmdir()
            hold.rename(top)
        else:
            top.rmdir()
