"""`clusterplan topology`: the device DOT parses with Graphviz and has one node per device and one edge per
link of the link plan, with unique ports; the overview collapses repeated units and keeps every link count;
JSON matches schemas/topology.schema.json; output is deterministic."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter

import jsonschema
import pytest

from tests.external import need
from tests.helpers import DESIGNS, FIXTURES, ROOT, cli
from validator.derive.links import iter_links
from validator.derive.pairs import summarize
from validator.emit.overview import build_overview
from validator.emit.topology_dot import DeviceGraph, device_dot, dot_label, dot_string
from validator.pipeline import load_topology

SCHEMA = json.loads((ROOT / "schemas" / "topology.schema.json").read_text())
SMALL = FIXTURES / "failures" / "two-tier.yaml"


def _plan(topology) -> tuple[set[str], int]:
    """Devices (every switch, every link end) and links of the link plan."""
    devices: set[str] = set()
    links = 0
    for f, fab in topology.fabrics.items():
        for tier in fab.tiers:
            devices.update(fab.names(tier.role))
        for link in iter_links(topology, f):
            devices.update((link.a_device, link.z_device))
            links += 1
    return devices, links


def test_dot_parses_with_graphviz_and_counts_match_the_link_plan(tmp_path):
    dot, gc = need("dot"), need("gc")
    out = tmp_path / "small.dot"
    code, _, err = cli("topology", str(SMALL), "--format", "dot", "-o", str(out))
    assert code == 0, err
    svg = subprocess.run([dot, "-Tsvg", str(out)], capture_output=True, text=True, timeout=120)
    assert svg.returncode == 0, svg.stderr
    ET.fromstring(svg.stdout[svg.stdout.index("<svg"):])
    counted = subprocess.run([gc, "-n", "-e", str(out)], capture_output=True, text=True, timeout=60)
    nodes, edges = (int(x) for x in counted.stdout.split()[:2])
    devices, links = _plan(load_topology(SMALL))
    # 16 servers + 8 leaves + 4 spines + 1 out-of-band leaf + 1 out-of-band spine = 30 devices
    assert nodes == len(devices) == 16 + 8 + 4 + 1 + 1
    # 128 server links + 128 leaf-spine links + 16 BMC + 12 switch management ports + 1 oob uplink
    assert edges == links == 128 + 128 + 16 + 12 + 1


def test_dot_is_nvidia_air_syntax():
    text = "".join(device_dot(load_topology(SMALL)))
    lines = text.splitlines()
    assert lines[0] == 'graph "failures-two-tier" {' and lines[-1] == "}"
    # the central rack R01-01, then the group (4 GPU racks and its network rack) on the same row
    assert '  "node00001" [ function="server" model="dgx-h100" rack="R01-02" ru="1" ]' in lines
    # a server's first link goes to the rail-1 leaf's first port (cage 1, first half of the twin-port OSFP)
    # the central rack R01-01, then the group (4 GPU racks and its network rack) on the same row
    assert '  "node00001":"eth1" -- "compute-leaf-su001-rail1":"swp1s0"' in lines


@pytest.mark.parametrize("path", sorted(DESIGNS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_port_is_used_once(path):
    topology = load_topology(path)
    ends = Counter()
    n = 0
    for _f, a, ap, z, zp, _s in DeviceGraph(topology).links():
        ends[(a, ap)] += 1
        ends[(z, zp)] += 1
        n += 1
    assert [k for k, v in ends.items() if v > 1] == []
    assert n == sum(summarize(topology, f).links for f in topology.fabrics)


def test_fabric_filter_and_json_schema(tmp_path):
    out = tmp_path / "t.json"
    assert cli("topology", str(SMALL), "-f", "json", "--fabric", "compute", "-o", str(out))[0] == 0
    data = json.loads(out.read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["fabrics"] == ["compute"] and len(data["links"]) == 128 + 128
    assert len(data["nodes"]) == 16 + 8 + 4
    code, _, err = cli("topology", str(SMALL), "--fabric", "storage")
    assert code == 2 and "no fabric storage" in err


def test_overview_collapses_repeated_units_and_keeps_the_counts():
    path = FIXTURES / "valid" / "meta-llama3-roce-zones.yaml"
    topology = load_topology(path)
    ov = build_overview(topology)
    # 3,072 servers in 77 compute groups: 76 alike and the last one shorter
    assert [(a, z) for a, z, _ in ov.runs] == [(0, 75), (76, 76)]
    assert len(ov.nodes) < 30
    for f, fab in topology.fabrics.items():
        planes = fab.planes if f != "oob" else 1
        total = sum(n for (a, z), (n, _s) in ov.edges.items() if z.startswith(f"{f}/")) * planes
        assert total == summarize(topology, f).links
    data = json.loads(cli("topology", str(path), "-f", "json", "--view", "overview")[1])
    jsonschema.validate(data, SCHEMA)


def test_svg_overview_is_inline_safe_xml():
    need("dot")
    code, svg, err = cli("topology", str(SMALL), "--format", "svg")
    assert code == 0, err
    root = ET.fromstring(svg[svg.index("<svg"):])
    titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert "compute network" in titles and "GPU servers" in titles


def test_no_graphviz_is_a_clear_error(monkeypatch):
    import graphviz

    def missing(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot",))

    monkeypatch.setattr(graphviz, "pipe_string", missing)
    code, _, err = cli("topology", str(SMALL), "--format", "svg")
    assert code == 2 and "apt-get install graphviz" in err


def test_dot_strings_are_escaped():
    assert dot_string('a "b" \\c\nd') == '"a \\"b\\" \\\\c d"'
    assert dot_label('x"\ny\\') == '"x\\"\\ny\\\\"'


def test_output_is_deterministic():
    topology = load_topology(SMALL)
    assert "".join(device_dot(topology)) == "".join(device_dot(load_topology(SMALL)))
    assert cli("topology", str(SMALL), "-f", "json", "--view", "overview") == \
        cli("topology", str(SMALL), "-f", "json", "--view", "overview")


def test_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_names_with_quotes_and_backslashes_stay_one_node_each(tmp_path):
    """An appliance named `<img src=x onerror=...> \\" & '` (tests/fixtures/report/hostile-names.yaml)."""
    dot, gc = need("dot"), need("gc")
    path = FIXTURES / "report" / "hostile-names.yaml"
    out = tmp_path / "hostile.dot"
    assert cli("topology", str(path), "-o", str(out))[0] == 0
    assert subprocess.run([dot, "-Tsvg", str(out)], capture_output=True, timeout=120).returncode == 0
    counted = subprocess.run([gc, "-n", "-e", str(out)], capture_output=True, text=True, timeout=60)
    nodes, edges = (int(x) for x in counted.stdout.split()[:2])
    devices, links = _plan(load_topology(path))
    assert (nodes, edges) == (len(devices), links)
