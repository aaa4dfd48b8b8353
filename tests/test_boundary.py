"""The repository is a boundary (issue 16): designs, catalogs, templates, the repository configuration
and declared output paths resolve, symlinks followed, inside the repository; a pull request's symlink
cannot make clusterplan read, quote or write anything outside it. Each test builds a repository with
a hostile symlink next to a file outside it that holds a secret."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, cli
from validator.pipeline import analyze

TRAINING = (FIXTURES / "valid" / "small-training.yaml").read_text()
SECRET = "apiVersion: clusterplan/v1\nsecret_key: s3cr3t-from-outside\n  broken: [\n"


@pytest.fixture
def repo(tmp_path):
    """(repository, outside): a git work tree, and a directory beside it holding secret.yaml."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text(SECRET)
    return tmp_path / "repo", tmp_path / "outside"


def test_design_symlinked_out_of_the_repository_is_refused_and_never_quoted(repo):
    root, outside = repo
    (root / "designs").mkdir()
    (root / "designs" / "d.yaml").symlink_to(outside / "secret.yaml")
    for target in ("designs/d.yaml", "designs"):
        code, out, err = cli("validate", str(root / target))
        assert code == 1 and "s3cr3t" not in out + err and "apiVersion" not in out
        assert "designs/d.yaml:1:1: error YAML000 [unreadable-file] the file is a symlink that leads outside the " \
               "repository" in out


def test_design_symlink_inside_the_repository_is_read(repo):
    root, _ = repo
    (root / "real.yaml").write_text(TRAINING)
    (root / "link.yaml").symlink_to("real.yaml")
    assert analyze(root / "link.yaml").findings == analyze(root / "real.yaml").findings


def test_catalog_symlinked_out_of_the_repository_is_refused(repo):
    root, outside = repo
    (root / "cat.yaml").symlink_to(outside / "secret.yaml")
    (root / "d.yaml").write_text(TRAINING.replace("kind: TrainingCluster",
                                                  "kind: TrainingCluster\ncatalogs: [cat.yaml]"))
    findings = analyze(root / "d.yaml", "d.yaml").findings
    assert [(f.rule, f.line, f.message) for f in findings] == [
        ("CAT005", 3, "catalog file 'cat.yaml' is outside the design repository")]


def test_templates_directory_symlinked_out_is_refused(repo):
    root, outside = repo
    (outside / "tpl").mkdir()
    (root / "tpl").symlink_to(outside / "tpl")
    (root / "d.yaml").write_text(TRAINING.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    code, _, err = cli("render", str(root / "d.yaml"), "-o", str(root / "out"))
    assert code == 1 and err == (f"clusterplan: error: {root / 'd.yaml'}: templates 'tpl' must be a directory inside "
                                 "the design repository\n")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_template_file_symlinked_out_or_a_fifo_is_never_read(repo, kind):
    root, outside = repo
    (root / "tpl" / "sonic").mkdir(parents=True)
    template = root / "tpl" / "sonic" / "config_db.json.j2"
    (outside / "t.j2").write_text("{{ s.name }} s3cr3t")
    if kind == "symlink":
        template.symlink_to(outside / "t.j2")
        expected = (f"template sonic/config_db.json.j2 '{template}' leads outside the repository ({root}); "
                    "symlinks out of the repository are not followed")
    else:
        os.mkfifo(template)
        expected = "template sonic/config_db.json.j2: is not a regular file (a FIFO, socket or device is never read)"
    (root / "d.yaml").write_text(TRAINING.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    code, _, err = cli("render", str(root / "d.yaml"), "-o", str(root / "out"))
    assert code == 1 and err == f"clusterplan: error: {expected}\n" and not (root / "out").exists()


def test_template_include_out_of_the_directory_is_refused(repo):
    root, _ = repo
    (root / "tpl" / "sonic").mkdir(parents=True)
    (root / "tpl" / "sonic" / "config_db.json.j2").write_text('{% include "../../d.yaml" %}')
    (root / "d.yaml").write_text(TRAINING.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    code, _, err = cli("render", str(root / "d.yaml"), "-o", str(root / "out"))
    assert code == 1 and err == ("clusterplan: error: template sonic/config_db.json.j2:1: template not found: "
                                 "../../d.yaml\n")


def test_repository_configuration_symlinked_out_is_an_error(repo, monkeypatch):
    root, outside = repo
    (root / "d.yaml").write_text(TRAINING)
    (root / ".clusterplan.yaml").symlink_to(outside / "secret.yaml")
    monkeypatch.chdir(root)
    code, _, err = cli("validate", "d.yaml")
    assert code == 2 and err == (f"clusterplan: error: repository configuration '{root / '.clusterplan.yaml'}' "
                                 f"leads outside the repository ({root}); symlinks out of the repository are not "
                                 "followed\n")


@pytest.mark.parametrize("declared", ["../outside/x.json", "gen/link/x.json", "/tmp/x.json"])
def test_outputs_never_write_out_of_the_repository(repo, monkeypatch, declared):
    root, outside = repo
    (root / "gen").mkdir()
    (root / "gen" / "link").symlink_to(outside)
    (root / "d.yaml").write_text(TRAINING)
    (root / ".clusterplan.yaml").write_text(f"outputs:\n  - design: d.yaml\n    bom: {declared}\n")
    monkeypatch.chdir(root)
    code, out, err = cli("outputs")
    assert code == 2 and out == "" and "leads outside the repository" in err and "outputs[0].bom" in err
    assert sorted(os.listdir(outside)) == ["secret.yaml"]


def test_outputs_manifest_cannot_remove_files_out_of_the_repository(repo, monkeypatch):
    root, outside = repo
    (root / "gen").mkdir()
    (root / "gen" / "link").symlink_to(outside)
    (root / "d.yaml").write_text(TRAINING)
    (root / ".clusterplan.yaml").write_text("outputs:\n  - design: d.yaml\n    bom: gen/d.json\n")
    monkeypatch.chdir(root)
    for entry in ("../outside/secret.yaml", "gen/link/secret.yaml", str(outside / "secret.yaml")):
        (root / ".clusterplan-outputs.json").write_text(json.dumps({"outputs": {entry: "file"}}))
        code, _, err = cli("outputs")
        assert code == 2 and entry in err and (outside / "secret.yaml").read_text() == SECRET


def test_boundary_is_the_directory_of_a_design_outside_git(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "secret.yaml").write_text(SECRET)
    (tmp_path / "work" / "d.yaml").symlink_to(tmp_path / "secret.yaml")
    findings = analyze(tmp_path / "work" / "d.yaml", "d.yaml").findings
    assert [(f.rule, f.message) for f in findings] == [
        ("YAML000", "the file is a symlink that leads outside the repository")]


def test_confine_resolves_every_symlink_on_the_way(tmp_path):
    from validator.base.paths import OutsideRepository, confine

    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "up").symlink_to(tmp_path)
    assert confine(tmp_path / "root" / "a" / "new.txt", tmp_path / "root") == (tmp_path / "root" / "a" / "new.txt")
    with pytest.raises(OutsideRepository):
        confine(tmp_path / "root" / "a" / "up" / "x", tmp_path / "root")
    with pytest.raises(OutsideRepository):
        confine(Path(tmp_path / "root" / ".." / "x"), tmp_path / "root")
