"""`clusterplan schema --install`: the design schema written into the design repository and every
design's modeline pointed at it by a relative path, so an editor validates with no network."""

from __future__ import annotations

import json
import subprocess

from tests.helpers import DESIGNS, cli


def test_install_writes_the_schema_and_relative_modelines(tmp_path):
    repo = tmp_path / "repo"
    (repo / "designs" / "lab").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    nested = repo / "designs" / "lab" / "roce.yaml"
    nested.write_text((DESIGNS / "roce-h100-2tier.yaml").read_text())   # has the https modeline
    plain = repo / "top.yaml"
    plain.write_text("apiVersion: clusterplan/v1\nkind: TrainingCluster\n")
    other = repo / "designs" / "not-a-design.yaml"
    other.write_text("key: value\n")
    code, _, err = cli("schema", "--install", str(repo / "designs"))
    assert code == 0, err
    schema = repo / ".clusterplan" / "clusterplan-design.schema.json"
    assert json.loads(schema.read_text())["title"]
    lines = nested.read_text().split("\n")
    assert lines[0] == "# yaml-language-server: $schema=../../.clusterplan/clusterplan-design.schema.json"
    assert (nested.parent / lines[0].split("=", 1)[1]).resolve() == schema.resolve()
    assert lines[1:] == (DESIGNS / "roce-h100-2tier.yaml").read_text().split("\n")[1:]   # only the modeline
    assert other.read_text() == "key: value\n"
    assert plain.read_text().startswith("apiVersion")       # outside the directory given: untouched
    code, _, _ = cli("schema", "--install", str(plain))
    assert code == 0
    first = plain.read_text().split("\n")[0]
    assert first == "# yaml-language-server: $schema=.clusterplan/clusterplan-design.schema.json"
    before = nested.read_text()
    cli("schema", "--install", str(repo / "designs"))
    assert nested.read_text() == before                     # installing twice changes nothing
