"""Switch configuration skeletons: golden files, SONiC YANG validation, determinism, sandboxing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import DESIGNS, FIXTURES, check_golden, cli, rel
from validator.emit.render import render_configs
from validator.pipeline import load_topology

try:
    import libyang  # noqa: F401

    HAVE_LIBYANG = True
except ImportError:  # .ci/run installs it; a developer machine may not have the C library
    HAVE_LIBYANG = False

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))


def _configs(path: Path):
    return list(render_configs(load_topology(path)))


@pytest.mark.skipif(not HAVE_LIBYANG, reason="libyang bindings not installed (.ci/run installs them)")
@pytest.mark.parametrize("path", [*EXAMPLES, FIXTURES / "valid" / "small-training.yaml"], ids=lambda p: p.stem)
def test_sonic_configs_validate_against_yang(path):
    from tests.sonic_yang import validate

    sonic = [c for c in _configs(path) if c.path.endswith("config_db.json")]
    # one switch per fabric and role: switches of a class share their structure (tier port layout,
    # fabric QoS) and differ only in names and addresses, which the parser checks the same way
    classes: dict[tuple[str, str], object] = {}
    for item in sonic:
        config = json.loads(item.text)
        classes.setdefault((item.path.split("/")[1], config["DEVICE_METADATA"]["localhost"]["type"]), config)
    for config in classes.values():
        validate(config)


def test_sonic_lossless_tables_present():
    item = next(c for c in _configs(DESIGNS / "roce-h100-2tier.yaml") if c.path.endswith("rail1.config_db.json"))
    config = json.loads(item.text)
    for table in ("DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "PORT_QOS_MAP", "BUFFER_PG",
                  "BUFFER_QUEUE", "WRED_PROFILE", "SCHEDULER", "QUEUE", "PFC_WD", "BGP_NEIGHBOR", "LOOPBACK_INTERFACE"):
        assert config[table], table
    assert config["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3"
    assert config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
    assert config["SCHEDULER"][config["QUEUE"]["Ethernet0|6"]["scheduler"]]["type"] == "STRICT"   # CNP queue
    assert config["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "separated"   # BGP from CONFIG_DB
    assert config["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"] == "2x400G"     # an 800G OSFP cage at 400G
    assert config["WRED_PROFILE"]["ROCE_LOSSLESS"]["ecn"] == "ecn_all"
    assert config["PORT"]["Ethernet0"]["description"] == "node00001:1 cable compute:node00001:1"
    assert config["PORT"]["Ethernet0"]["speed"] == "400000" and config["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3"
    assert config["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "4200001000"
    peers = {n["asn"] for n in config["BGP_NEIGHBOR"].values()}
    assert peers == {"4200000001"}                                           # every uplink peers with the spine ASN


def test_point_to_point_addresses_are_unique_and_paired():
    """No address twice across the fabric; every BGP session runs between the two ends of one /31 (local
    and peer differ in the last bit), each end on the device that names it: 6 leaves x 32 uplinks = 192
    leaf-spine links, each seen from both of its switches."""
    import ipaddress

    configs = {Path(item.path).name.split(".")[0]: json.loads(item.text)
               for item in _configs(DESIGNS / "inference-disaggregated-h100.yaml") if item.path.endswith(".json")}
    seen: dict[str, str] = {}
    for device, config in configs.items():
        for key in config["INTERFACE"]:
            if "|" in key:
                ip = key.split("|")[1].split("/")[0]
                assert ip not in seen, f"{ip} on {device} and {seen[ip]}"
                seen[ip] = device
    sessions = 0
    for device, config in configs.items():
        for peer, session in config.get("BGP_NEIGHBOR", {}).items():
            local = session["local_addr"]
            assert int(ipaddress.ip_address(local)) ^ 1 == int(ipaddress.ip_address(peer)), (device, local, peer)
            assert (seen[local], seen[peer]) == (device, session["name"])
            sessions += 1
    assert sessions == 2 * 6 * 32


def test_golden_configs():
    for item in _configs(FIXTURES / "render" / "small-eos.yaml"):
        if item.path.endswith(("rail1.cfg", "spine0001.cfg")):
            check_golden(f"render/small-eos/{Path(item.path).name}", item.text)
    for item in _configs(DESIGNS / "superpod-h100-4su.yaml"):
        if item.path.endswith(("opensm.conf", "partitions.conf", "inband-leaf0001.startup.yaml")):
            check_golden(f"render/superpod/{item.path.replace('/', '_')}", item.text)
    first = next(c for c in _configs(DESIGNS / "inference-disaggregated-h100.yaml") if c.path.endswith("json"))
    check_golden("render/disaggregated/" + Path(first.path).name, first.text)


def test_nvue_output_is_yaml():
    for item in _configs(DESIGNS / "superpod-h100-4su.yaml"):
        if item.path.endswith("startup.yaml"):
            doc = yaml.safe_load(item.text)
            assert doc[0]["header"]["nvue-api-version"] == "nvue_v1"
            assert doc[1]["set"]["system"]["hostname"] == Path(item.path).name.split(".")[0]


def test_render_is_byte_identical_and_keeps_foreign_files(tmp_path):
    out1, out2 = tmp_path / "a", tmp_path / "b"
    out1.mkdir()
    (out1 / "README.txt").write_text("mine")
    for out in (out1, out2):
        code, _, _ = cli("render", rel(DESIGNS / "inference-disaggregated-h100.yaml"), "-o", str(out))
        assert code == 0
    files1 = sorted(p.relative_to(out1) for p in out1.rglob("*") if p.is_file())
    files2 = sorted(p.relative_to(out2) for p in out2.rglob("*") if p.is_file())
    assert set(files1) - set(files2) == {Path("README.txt")}
    assert (out1 / "README.txt").read_text() == "mine"
    for rel_path in files2:
        assert (out1 / rel_path).read_bytes() == (out2 / rel_path).read_bytes()
    assert not list(out1.rglob("*.tmp"))


def _design_with_templates(tmp_path, template: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tpl" / "sonic").mkdir(parents=True)
    (tmp_path / "tpl" / "sonic" / "config_db.json.j2").write_text(template)
    design = (FIXTURES / "valid" / "small-training.yaml").read_text()
    path = tmp_path / "d.yaml"
    path.write_text(design.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    return path


def test_design_templates_override_builtin(tmp_path):
    path = _design_with_templates(tmp_path, '{"hostname": {{ data.DEVICE_METADATA.localhost.hostname | tojson }}}')
    code, _, _ = cli("render", str(path), "-o", str(tmp_path / "out"))
    assert code == 0
    text = (tmp_path / "out" / "configs" / "compute" / "compute-leaf-su001-rail1.config_db.json").read_text()
    assert json.loads(text) == {"hostname": "compute-leaf-su001-rail1"}


@pytest.mark.parametrize("template", ["{{ ''.__class__.__mro__[1].__subclasses__() }}", "{{ no_such_fact }}"])
def test_design_templates_are_sandboxed_and_strict(tmp_path, template):
    path = _design_with_templates(tmp_path, template)
    code, _, err = cli("render", str(path), "-o", str(tmp_path / "out"))
    assert code == 1 and "template sonic/config_db.json.j2" in err
    assert not (tmp_path / "out" / "configs").exists() or not list((tmp_path / "out").rglob("*.json"))


def test_templates_outside_the_repository_are_refused(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    design = (FIXTURES / "valid" / "small-training.yaml").read_text()
    path = tmp_path / "repo" / "d.yaml"
    (tmp_path / "outside").mkdir()
    path.write_text(design.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: ../outside"))
    code, _, err = cli("render", str(path), "-o", str(tmp_path / "out"))
    assert code == 1 and "inside the design repository" in err
