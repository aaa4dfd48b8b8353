"""The built-in catalog: valid against its schema, sourced, internally consistent; design overrides."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.helpers import ROOT
from validator.read.loader import load_yaml, read_text
from validator.resolve.catalog import BUILTIN_FILES, DATA_DIR, builtin_catalog

SCHEMA = json.loads((ROOT / "schemas" / "clusterplan-catalog.schema.json").read_text())


@pytest.mark.parametrize("name", BUILTIN_FILES)
def test_builtin_file_matches_catalog_schema(name):
    path = DATA_DIR / f"{name}.yaml"
    data = load_yaml(read_text(path, name), name).data
    jsonschema.Draft202012Validator(SCHEMA).validate(data)


def test_every_entry_has_a_source():
    cat = builtin_catalog()
    for kind, entries in cat.entries.items():
        for entry in entries.values():
            assert len(entry.source) >= 8, f"{kind} {entry.id} has no usable source"


def test_issue_minimum_catalog_is_present():
    cat = builtin_catalog()
    need = {
        "gpu": ["a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "gb200", "mi300x", "l40s", "l4"],
        "server": ["dgx-h100", "hgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72-tray", "pcie-l40s-8gpu"],
        "nic": ["cx7-osfp", "cx8", "bf3-b3140h"],
        "switch": ["qm9700", "q3400", "sn5600", "sonic-th5-64x800", "sn4600c", "sn2201"],
        "transceiver": ["mma4z00-ns", "mms4x00-ns", "mma4z00-ns400", "mms4x00-ns400"],
        "cable": ["mcp4y10", "mcp7y00", "acc-400g", "aoc-200g-qsfp56", "fiber-mpo12-mmf", "fiber-mpo12-smf"],
        "facility": ["rack-42u", "rack-48u", "pdu-3ph-415v-60a", "cdu-in-rack-200", "rdhx-active-75"],
        "model": ["llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b",
                  "mixtral-8x7b", "deepseek-v3"],
    }
    for kind, ids in need.items():
        missing = set(ids) - set(cat.entries[kind])
        assert not missing, f"{kind}: {missing}"


def test_cross_references_resolve():
    cat = builtin_catalog()
    for server in cat.entries["server"].values():
        assert server.gpu in cat.entries["gpu"]
        for slot in server.nics:
            assert slot.model in cat.entries["nic"]
        for links in server.links.values():
            assert links.nic in cat.entries["nic"]


def test_published_figures():
    cat = builtin_catalog()
    assert cat.gpu("h100-sxm").tflops["bf16"] == 989 and cat.gpu("h100-sxm").tflops["fp8"] == 1979
    assert cat.switch("qm9700").ports_at(400) == 64 and cat.switch("qm9700").ports_at(200) == 128
    assert cat.switch("sn5600").ports_at(400) == 128
    assert cat.switch("sn2201").ports_at(1) == 48 and cat.switch("sn2201").ports_at(100) == 4
    assert cat.server("dgx-h100").max_power_w == 10200
    deepseek = cat.model("deepseek-v3")
    assert deepseek.mla is not None and deepseek.mla.kv_lora_rank + deepseek.mla.qk_rope_head_dim == 576


def test_design_catalog_overrides_and_adds(tmp_path):
    from validator.pipeline import load_topology

    (tmp_path / ".git").mkdir()
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "servers.yaml").write_text(
        (DATA_DIR / "servers.yaml").read_text().replace("id: pcie-l40s-8gpu", "id: my-l40s")
        .replace("max_power_w: null\n    weight_kg: null\n    cooling: air\n    nics:\n      - {model: bf3-b3220",
                 "max_power_w: 3500\n    weight_kg: null\n    cooling: air\n    nics:\n      - {model: bf3-b3220"))
    design = (ROOT / "tests" / "fixtures" / "valid" / "small-inference.yaml").read_text()
    design = design.replace("server: dgx-h200", "server: my-l40s").replace(
        "kind: InferenceFleet", "kind: InferenceFleet\ncatalogs: [catalog/servers.yaml]")
    design = design.replace("speed_gbps: 400", "speed_gbps: 200")
    (tmp_path / "d.yaml").write_text(design)
    topo = load_topology(tmp_path / "d.yaml")
    assert topo.resolved.server.id == "my-l40s"
    assert topo.resolved.server.max_power_w == 3500


def test_bad_catalog_entry_reports_its_line(tmp_path):
    from validator.base.errors import DesignError
    from validator.pipeline import load_topology

    (tmp_path / ".git").mkdir()
    (tmp_path / "extra.yaml").write_text("kind: gpu\nentries:\n  - id: x1\n    name: X\n    memory_gb: lots\n")
    design = (ROOT / "tests" / "fixtures" / "valid" / "small-inference.yaml").read_text()
    (tmp_path / "d.yaml").write_text(design.replace("kind: InferenceFleet",
                                                    "kind: InferenceFleet\ncatalogs: [extra.yaml]"))
    with pytest.raises(DesignError) as err:
        load_topology(tmp_path / "d.yaml")
    lines = {(d.code, d.line) for d in err.value.diagnostics}
    assert ("CAT002", 5) in lines  # memory_gb: lots
    assert all(d.file.endswith("extra.yaml") for d in err.value.diagnostics)


@pytest.mark.parametrize("oob_ports, refused", [(1, False), (2, True)])
def test_a_server_with_more_than_one_oob_port_is_refused_not_cabled_as_one(tmp_path, oob_ports, refused):
    """The out-of-band network is laid out with one BMC port per server: a catalog server with two would get
    one cable and one leaf port each (the second silently missing), so it is refused at its entry's line."""
    from validator.base.errors import DesignError
    from validator.pipeline import load_topology

    (tmp_path / ".git").mkdir()
    entry = (DATA_DIR / "servers.yaml").read_text().split("  - id: dgx-h100\n")[1].split("  - id:")[0]
    assert "oob: {nic: bmc-1g, count: 1, speed_gbps: 1}" in entry
    entry = entry.replace("oob: {nic: bmc-1g, count: 1,", f"oob: {{nic: bmc-1g, count: {oob_ports},")
    (tmp_path / "servers.yaml").write_text("kind: server\nentries:\n  - id: my-h100\n" + entry)
    design = (ROOT / "tests" / "fixtures" / "valid" / "small-training.yaml").read_text()
    (tmp_path / "d.yaml").write_text(design.replace("server: dgx-h100", "server: my-h100").replace(
        "kind: TrainingCluster", "kind: TrainingCluster\ncatalogs: [servers.yaml]"))
    if not refused:
        assert load_topology(tmp_path / "d.yaml").resolved.server.id == "my-h100"
        return
    with pytest.raises(DesignError) as err:
        load_topology(tmp_path / "d.yaml")
    found = [(d.code, d.line, d.message) for d in err.value.diagnostics]
    assert [(code, line) for code, line, _ in found] == [("CAT002", 3)], found
    assert "links.oob.count is 2" in found[0][2]


@pytest.mark.parametrize("how", ["dotdot", "symlink"])
def test_catalog_paths_cannot_escape_the_repository(tmp_path, how):
    from validator.base.errors import DesignError
    from validator.pipeline import load_topology

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "outside.yaml"
    outside.write_text("kind: gpu\nentries: []\n")
    if how == "symlink":
        (repo / "link.yaml").symlink_to(outside)
        ref = "link.yaml"
    else:
        ref = "../outside.yaml"
    design = (ROOT / "tests" / "fixtures" / "valid" / "small-inference.yaml").read_text()
    (repo / "d.yaml").write_text(design.replace("kind: InferenceFleet", f"kind: InferenceFleet\ncatalogs: [{ref}]"))
    with pytest.raises(DesignError) as err:
        load_topology(repo / "d.yaml")
    assert [d.code for d in err.value.diagnostics] == ["CAT005"]
