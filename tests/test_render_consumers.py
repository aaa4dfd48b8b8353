"""Each rendered configuration checked by its consumer's own parser or schema: NVUE startup.yaml
against the NVUE object model of the targeted Cumulus Linux release (nvueschema, generated from
NVIDIA's OpenAPI spec), EOS against pyavd (AVD's eos_cli_config_gen schema and its CLI templates),
OpenSM files against what opensm and ibdiagnet read. SONiC YANG validation is in test_render.py."""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import DESIGNS, FIXTURES
from validator.base.resources import load_data
from validator.emit.render import render_configs
from validator.pipeline import load_topology

EXAMPLES = [*sorted(DESIGNS.glob("*.yaml")), FIXTURES / "valid" / "small-training.yaml",
            FIXTURES / "render" / "small-eos.yaml"]
BASE = yaml.safe_load((FIXTURES / "render" / "small-eos.yaml").read_text())
RELEASE = load_data("switch_os.yaml")["nvue_release"]["value"]
# libyaml's scanner and parser with PyYAML's safe constructor and resolver: the same documents as
# yaml.safe_load, several times faster on the 50 kB startup files
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _with_switch(switch: str, speed: int = 400) -> dict[str, Any]:
    design = copy.deepcopy(BASE)
    design["fabrics"]["compute"]["tiers"] = {"leaf": {"switch": switch}, "spine": {"switch": switch}}
    design["fabrics"]["compute"]["speed_gbps"] = speed
    return design


@cache
def _rendered(path: Path) -> dict[str, str]:
    return {i.path: i.text for i in render_configs(load_topology(path))}


def _nvue_model() -> Any:
    import importlib

    release = ".".join(RELEASE.split(".")[:2]).replace(".", "_")
    return importlib.import_module(f"nvueschema.models.v{release}").NvueConfig


def _check_nvue(text: str) -> dict[str, Any]:
    """Validate against the release's NVUE models and prove nothing was silently ignored: the
    models drop unknown keys, so the document must come back unchanged from a validate/dump round trip."""
    header, body = yaml.load(text, Loader=_LOADER)
    assert header["header"]["version"] == f"Cumulus Linux {RELEASE}"
    doc = {**body["set"], "header": header["header"]}
    model = _nvue_model().model_validate(doc)
    # compared with the document as read (a YAML round trip of what safe_load read is the same document)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == doc
    return dict(body["set"])


def test_nvue_startup_files_match_the_nvue_schema():
    checked = 0
    for path in EXAMPLES:
        for name, text in _rendered(path).items():
            if name.endswith("startup.yaml"):
                _check_nvue(text)
                checked += 1
    assert checked >= 30


def test_nvue_breakout_is_set_on_the_parent_before_its_sub_ports():
    items = render_configs(topology_of(_with_switch("sn5600")))
    text = next(i.text for i in items if i.path.endswith("compute-leaf-su001-rail1.startup.yaml"))
    doc = _check_nvue(text)
    names = list(doc["interface"])
    # SN5600: 64 OSFP cages of 8 lanes; at 400G each cage gives 2 ports of 4 lanes (swpNs0, swpNs1)
    assert doc["interface"]["swp1"]["link"]["breakout"] == {"2x": {"lanes-per-port": "4"}}
    assert names.index("swp1") < names.index("swp1s0") < names.index("swp1s1")
    subs = [n for n in names if re.fullmatch(r"swp\d+s\d", n)]
    parents = {re.sub(r"s\d$", "", n) for n in subs}
    assert all("breakout" in doc["interface"][p]["link"] for p in parents)
    assert all(doc["interface"][n]["link"]["speed"] == "400G" for n in subs)


def _eos_pairs(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    items = _rendered(path)
    return [(name, text, yaml.safe_load(items[name.removesuffix(".cfg") + ".avd.yml"]))
            for name, text in items.items() if name.endswith(".cfg")]


def test_eos_structured_config_validates_against_pyavd_schema_and_cli_matches_pyavd():
    import pyavd

    pairs = _eos_pairs(FIXTURES / "render" / "small-eos.yaml")
    assert pairs
    for name, text, avd in pairs:
        result = pyavd.validate_structured_config(avd).validation_result
        assert not result.violations, [(v.message, v.path) for v in result.violations]
        assert not result.ignored_eos_config_keys
        ours = re.sub(r"\A(! .*\n)+", "", text).removesuffix("!\nend\n")
        assert ours == pyavd.get_device_config(avd), name


def test_eos_modular_chassis_names_slot_port_lane(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "chassis.yaml").write_text(yaml.safe_dump({"kind": "switch", "entries": [{
        "id": "arista-7808r4", "name": "Arista 7808R4 with 8 x 7800R4-36PE", "vendor": "arista",
        "technology": "ethernet", "asic": "Jericho3", "os": "eos", "mgmt_ports": 1,
        "port_groups": [{"cages": 36, "form_factor": "OSFP", "ports_per_cage": {800: 1, 400: 2}}] * 8,
        "source": "test entry: eight 36-port line cards"}]}))
    design = _with_switch("arista-7060x6-64pe")
    design["fabrics"]["compute"]["tiers"]["spine"] = {"switch": "arista-7808r4"}
    design["catalogs"] = ["chassis.yaml"]
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(design, sort_keys=False))
    items = _rendered(path)
    spine = next(t for n, t in items.items() if "spine" in n and n.endswith(".cfg"))
    names = re.findall(r"^interface (Ethernet\S+)", spine, re.M)
    # line cards from slot 3; port 1 of the card; 400G = 4 of the cage's 8 lanes, so lanes 1 and 5
    assert names[:2] == ["Ethernet3/1/1", "Ethernet3/1/5"]
    assert all(re.fullmatch(r"Ethernet([3-9]|10)/\d+/[15]", n) for n in names)


def test_opensm_names_the_partitions_file_it_writes_and_explains_its_routing():
    items = _rendered(DESIGNS / "superpod-h100-4su.yaml")
    conf = items["configs/compute/opensm.conf"]
    partitions = re.search(r"^partition_config_file (\S+)$", conf, re.M)
    assert partitions and f"configs/compute/{Path(partitions.group(1)).name}" in items
    engine = re.search(r"^routing_engine (\S+)$", conf, re.M)
    # two tiers: a fat tree, upstream OpenSM's fat-tree engine first, up/down if it cannot rank the tree
    assert engine and engine.group(1) == "ftree,updn"
    assert "ar_updn" not in conf and "configs/compute/opensm-nvidia-ar.conf" not in items
    assert re.search(r"^# routing engine: 2-tier fat tree", conf, re.M)


def test_ibdiagnet_topology_lists_every_cable_once():
    topology = load_topology(DESIGNS / "superpod-h100-4su.yaml")
    items = {i.path: i.text for i in render_configs(topology)}
    topo = items["configs/compute/ibdiagnet.topo"]
    cables = re.findall(r"^   P(\d+) -> (\S+) (\S+) P(\S+)$", topo, re.M)
    fab = topology.fabrics["compute"]
    # DGX SuperPOD H100 RA, table 4 at 4 SU: 1020 compute and UFM cables + 1024 spine-leaf cables
    assert len(cables) == 1020 + 1024
    assert len(set(cables)) == len(cables)
    sections = re.findall(r"^QM9700 (\S+)$", topo, re.M)
    assert len(sections) == fab.switches


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_notes_list_every_placeholder_in_the_configs(path):
    items = _rendered(path)
    notes = items["configs/NOTES.md"]
    placeholders = any("SET-FROM-VENDOR" in t for n, t in items.items() if n.endswith(".json"))
    assert ("`SET-FROM-VENDOR`" in notes) == placeholders


# upstream OpenSM's routing engines (opensm(8), linux-rdma/opensm osm_routing engine table)
UPSTREAM_ENGINES = {"minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2QoS", "nue", "dfsssp", "sssp",
                    "no_fallback"}


def test_opensm_uses_upstream_engines_and_nvidia_adaptive_routing_only_when_chosen():
    for path in EXAMPLES:
        for name, text in _rendered(path).items():
            if name.endswith("/opensm.conf"):
                engines = re.search(r"^routing_engine (\S+)$", text, re.M)
                assert engines and set(engines.group(1).split(",")) <= UPSTREAM_ENGINES, name
    design = yaml.safe_load((DESIGNS / "superpod-h100-4su.yaml").read_text())
    design["fabrics"]["compute"]["adaptive_routing"] = True
    items = {i.path: i.text for i in render_configs(topology_of(design))}
    assert re.search(r"^routing_engine ftree,updn$", items["configs/compute/opensm.conf"], re.M)
    adaptive = items["configs/compute/opensm-nvidia-ar.conf"]
    assert re.search(r"^routing_engine ar_updn$", adaptive, re.M)
    assert "adaptive routing, chosen in the design" in adaptive
    assert "configs/storage/opensm-nvidia-ar.conf" not in items      # the storage fabric did not ask for it
