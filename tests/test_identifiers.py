"""One identifier policy and no unknown key anywhere (issue 16). The names are in
tests/fixtures/hostile/names.yaml, one per character class; each refused one gives one exact finding at
its YAML line, and the accepted ones render to file names and hostnames of the same form."""

from __future__ import annotations

import csv
import json
import re

import pytest
import yaml

from tests.helpers import FIXTURES, cli
from validator.emit.files import MANIFEST
from validator.pipeline import analyze
from validator.read.names import IDENTIFIER_PATTERN

NAMES = yaml.safe_load((FIXTURES / "hostile" / "names.yaml").read_text(encoding="utf-8"))
SMALL = (FIXTURES / "valid" / "small-inference.yaml").read_text()
EOS = (FIXTURES / "render" / "small-eos.yaml").read_text()
RULE = "a name is letters, digits, '-', '_' and '.', starting with a letter or digit, at most 63 characters"


def _findings(tmp_path, text):
    path = tmp_path / "d.yaml"
    path.write_text(text, encoding="utf-8")
    return [(f.rule, f.line, f.col, f.message, f.hint) for f in analyze(path, "d.yaml").findings]


@pytest.mark.parametrize("name", NAMES["refused"], ids=range(len(NAMES["refused"])))
def test_refused_design_name_is_one_clear_error_at_its_line(tmp_path, name):
    found = _findings(tmp_path, SMALL.replace("name: fixture", f"name: {json.dumps(name)}"))
    expected = [("SCH001", 4, 9, f"metadata.name: {name!r} is not a valid name", RULE)]
    if name == "":
        expected.append(("SCH001", 4, 9, "metadata.name: '' should be non-empty",
                         "Short name of the cluster, unique in the repo (" + RULE[10:] + ")."))
    assert found == expected


@pytest.mark.parametrize("name", NAMES["refused"][:12], ids=range(12))
def test_refused_appliance_name_is_one_clear_error_at_its_line(tmp_path, name):
    text = EOS.replace("      spine: {switch: arista-7060x6-64pe}\n", "      spine: {switch: arista-7060x6-64pe}\n"
                       f"    extra_endpoints: [{{name: {json.dumps(name)}, count: 1, ports: 1}}]\n", 1)
    assert _findings(tmp_path, text) == [
        ("SCH001", 19, 30, f"fabrics.compute.extra_endpoints[0].name: {name!r} is not a valid name", RULE)]


def test_too_long_name_is_refused(tmp_path):
    name = NAMES["too_long"]
    found = _findings(tmp_path, SMALL.replace("name: fixture", f"name: {name}"))
    assert [f[:4] for f in found] == [("SCH001", 4, 9, f"metadata.name: '{name}' is too long")]


def test_reserved_device_names_are_refused(tmp_path):
    text = EOS.replace("      spine: {switch: arista-7060x6-64pe}\n", "      spine: {switch: arista-7060x6-64pe}\n"
                       "    extra_endpoints: [{name: server, count: 1, ports: 1}]\n", 1)
    assert _findings(tmp_path, text) == [
        ("SCH001", 19, 30, "fabrics.compute.extra_endpoints[0].name: 'server' is a reserved name",
         "choose another name; these name clusterplan's own devices: server, storage, leaf, spine, core, "
         "rack-system")]


def test_accepted_names_make_files_and_hostnames_of_the_same_form(tmp_path):
    names = NAMES["accepted"]
    endpoints = ", ".join(f"{{name: {json.dumps(n)}, count: 1, ports: 1}}" for n in names)
    text = EOS.replace("name: small-eos", f"name: {names[-1]}").replace(
        "      spine: {switch: arista-7060x6-64pe}\n",
        f"      spine: {{switch: arista-7060x6-64pe}}\n    extra_endpoints: [{endpoints}]\n", 1)
    path = tmp_path / "d.yaml"
    path.write_text(text)
    code, _, err = cli("render", str(path), "-o", str(tmp_path / "out"))
    assert code == 0, err
    form = re.compile(IDENTIFIER_PATTERN)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and p.name != MANIFEST]
    assert files and all(form.match(p.name) for p in files)
    with (tmp_path / "out" / "cabling.csv").open(newline="") as fh:
        devices = {row[end] for row in csv.DictReader(fh) for end in ("a_device", "z_device")}
    assert {f"compute-{n}0001" for n in names} <= devices and all(form.match(d) for d in devices)


@pytest.mark.parametrize(("section", "expected"), [
    ("thresholds: {min_spine: 2}", ("unknown key 'min_spine' in thresholds", "did you mean 'min_spines'?")),
    ("thresholds: {air_cooling_max_kw: -1}", ("thresholds.air_cooling_max_kw: -1 is out of range; it must be >= 0",
                                              "check the value")),
    ("severity: {NET999: warning}", ("unknown rule 'NET999' in severity", "did you mean 'NET009'?")),
    ("severity: {net001: warning}", ("key 'net001' in severity is not a valid name",
                                     "A rule ID: three capital letters and three digits, e.g. NET002.")),
    ("costs: {prices_usd: {DGX H200: 1}}", ("key 'DGX H200' in costs.prices_usd is not a valid name",
                                            "A catalog id: lowercase letters, digits, '.', '_' and '-', at most 63 "
                                            "characters.")),
    ("costs: {spares_pct: {'=cmd': 1}}", ("key '=cmd' in costs.spares_pct is not a valid name", RULE)),
])
def test_unknown_or_invalid_keys_are_errors_with_a_hint(tmp_path, section, expected):
    found = _findings(tmp_path, SMALL + section + "\n")
    assert [(f[0], f[1], f[3], f[4]) for f in found] == [("SCH001", SMALL.count("\n") + 1, *expected)]


def test_dscp_keys_are_dscp_values(tmp_path):
    found = _findings(tmp_path, EOS.replace("dscp_to_tc: {26: 3, 48: 6}", "dscp_to_tc: {26: 3, 64: 6, ef: 1}"))
    assert [(f[1], f[2], f[3], f[4]) for f in found] == [
        (22, 29, "key '64' in fabrics.compute.lossless.switch.dscp_to_tc is not a valid name", "A DSCP value, 0-63."),
        (22, 36, "key 'ef' in fabrics.compute.lossless.switch.dscp_to_tc is not a valid name", "A DSCP value, 0-63.")]


def test_repository_configuration_unknown_keys_have_did_you_mean(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.yaml").write_text(SMALL)
    (tmp_path / ".clusterplan.yaml").write_text(
        "severty: {NET001: warning}\nseverity: {NET999: info}\noutputs:\n  - design: d.yaml\n    bmo: x.json\n"
        "waivers:\n  - {rule: NET001, reason: x, owner: y, desing: '*.yaml'}\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("validate", "d.yaml")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "clusterplan: error: .clusterplan.yaml:1:1: unknown key 'severty' in <root> (did you mean 'severity'?)",
        "clusterplan: error: .clusterplan.yaml:5:5: unknown key 'bmo' in outputs[0] (did you mean 'bom'?)",
        "clusterplan: error: .clusterplan.yaml:7:41: unknown key 'desing' in waivers[0] (did you mean 'design'?)"]
    (tmp_path / ".clusterplan.yaml").write_text("severity: {NET999: info}\n")
    code, _, err = cli("validate", "d.yaml")
    assert code == 2 and err == ("clusterplan: error: .clusterplan.yaml:1:12: unknown rule 'NET999' in severity "
                                 "(did you mean 'NET009'?)\n")
