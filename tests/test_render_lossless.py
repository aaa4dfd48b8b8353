"""Every lossless value of a design reaches the SONiC, EOS and NVUE output, and changing any one of
them changes the output (a design with PFC on priority 4 and DSCP 24 must not render like one with
the defaults). Expected values are the design's, converted by arithmetic written here."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import FIXTURES
from validator.emit.render import render_configs

BASE = yaml.safe_load((FIXTURES / "render" / "small-eos.yaml").read_text())
SWITCH_FOR_OS = {"sonic": "sonic-th5-64x800", "eos": "arista-7060x6-64pe", "nvue": "sn5600"}
SUFFIX = {"sonic": "config_db.json", "eos": ".cfg", "nvue": "startup.yaml"}

# (name, path under lossless.switch, base value, changed value)
CHANGES = [
    ("pfc", ("pfc_priorities",), [3], [4]),
    ("dscp", ("dscp_to_tc",), {26: 3, 48: 6}, {24: 3, 46: 6}),
    ("roce_tc", ("roce_tc",), 3, 4),
    ("cnp_tc", ("cnp_tc",), 6, 5),
    ("ecn_min", ("ecn", "min_threshold_kb"), 150, 200),
    ("ecn_max", ("ecn", "max_threshold_kb"), 1500, 2000),
    ("ecn_probability", ("ecn", "probability_pct"), 100, 50),
    ("watchdog_detection", ("pfc_watchdog", "detection_ms"), 200, 300),
    ("watchdog_restoration", ("pfc_watchdog", "restoration_ms"), 400, 800),
    ("mtu", ("mtu",), None, 9000),
]


def _design(os: str, change: tuple[Any, ...] | None = None) -> dict[str, Any]:
    design = copy.deepcopy(BASE)
    fabric = design["fabrics"]["compute"]
    fabric["tiers"] = {"leaf": {"switch": SWITCH_FOR_OS[os]}, "spine": {"switch": SWITCH_FOR_OS[os]}}
    if change is not None:
        _name, path, _old, new = change
        node = fabric["lossless"]["switch"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = new
    return design


def _leaf(os: str, change: tuple[Any, ...] | None = None) -> str:
    items = render_configs(topology_of(_design(os, change)))
    return next(i.text for i in items if "leaf" in i.path and i.path.endswith(SUFFIX[os]))


def _settings(change: tuple[Any, ...] | None) -> dict[str, Any]:
    """The lossless settings in force: the base ones with the change applied."""
    ll = copy.deepcopy(BASE["fabrics"]["compute"]["lossless"]["switch"])
    ll["mtu"] = 9100   # validator/data/addressing.yaml default_mtu, when the design gives none
    if change is not None:
        _name, path, _old, new = change
        node = ll
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = new
    return ll


def _check_sonic(text: str, s: dict[str, Any]) -> None:
    c = json.loads(text)
    port = next(iter(c["PORT"]))
    assert c["PORT"][port]["mtu"] == str(s["mtu"])
    assert c["PORT_QOS_MAP"][port]["pfc_enable"] == ",".join(str(p) for p in s["pfc_priorities"])
    for dscp, tc in s["dscp_to_tc"].items():
        assert c["DSCP_TO_TC_MAP"]["ROCE"][str(dscp)] == str(tc)
    roce = c["QUEUE"][f"{port}|{s['roce_tc']}"]
    assert roce["wred_profile"] == "ROCE_LOSSLESS"
    assert c["SCHEDULER"][c["QUEUE"][f"{port}|{s['cnp_tc']}"]["scheduler"]]["type"] == "STRICT"
    wred = c["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert wred["green_min_threshold"] == str(s["ecn"]["min_threshold_kb"] * 1024)
    assert wred["green_max_threshold"] == str(s["ecn"]["max_threshold_kb"] * 1024)
    assert wred["green_drop_probability"] == str(s["ecn"]["probability_pct"])
    wd = c["PFC_WD"][port]
    assert wd["detection_time"] == str(s["pfc_watchdog"]["detection_ms"])
    assert wd["restoration_time"] == str(s["pfc_watchdog"]["restoration_ms"])
    for p in s["pfc_priorities"]:
        assert f"{port}|{p}" in c["BUFFER_PG"]


def _block(text: str, header: str) -> str:
    """The indented lines under `header` in EOS CLI."""
    match = re.search(rf"^{re.escape(header)}\n((?:[ ]{{3,}}.*\n)*)", text, re.M)
    assert match, header
    return match.group(1)


def _check_eos(text: str, s: dict[str, Any]) -> None:
    profile = _block(text, "qos profile ROCE_LOSSLESS")
    for p in s["pfc_priorities"]:
        assert f"   priority-flow-control priority {p} no-drop\n" in profile
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in s["dscp_to_tc"].items():
        by_tc.setdefault(tc, []).append(dscp)
    for tc, dscps in by_tc.items():
        assert f"qos map dscp {' '.join(str(d) for d in sorted(dscps))} to traffic-class {tc}\n" in text
    ecn = s["ecn"]
    roce = re.search(rf"   tx-queue {s['roce_tc']}\n((?:      .*\n)*)", profile)
    assert roce and (f"random-detect ecn minimum-threshold {ecn['min_threshold_kb']} kbytes maximum-threshold "
                     f"{ecn['max_threshold_kb']} kbytes max-mark-probability {ecn['probability_pct']}") in roce.group(1)
    assert f"   tx-queue {s['cnp_tc']}\n      priority strict\n" in profile
    wd = s["pfc_watchdog"]
    assert f"priority-flow-control pause watchdog default timeout {wd['detection_ms'] / 1000:g}\n" in text
    assert f"priority-flow-control pause watchdog default recovery-time {wd['restoration_ms'] / 1000:g}\n" in text
    first = next(m.group(0) for m in re.finditer(r"^interface Ethernet\S+\n(?:   .*\n)*", text, re.M))
    assert f"   mtu {s['mtu']}\n" in first and "   service-profile ROCE_LOSSLESS\n" in first


def _check_nvue(text: str, s: dict[str, Any]) -> None:
    doc = yaml.safe_load(text)[1]["set"]
    qos = doc["qos"]
    # NVUE keys numbered objects by strings ('3': {...})
    assert sorted(qos["pfc"]["default-global"]["switch-priority"]) == sorted(str(p) for p in s["pfc_priorities"])
    assert {d: v["switch-priority"] for d, v in qos["mapping"]["default-global"]["dscp"].items()} == \
        {str(d): tc for d, tc in s["dscp_to_tc"].items()}
    tc = qos["congestion-control"]["default-global"]["traffic-class"]
    assert list(tc) == [str(s["roce_tc"])]
    ecn = tc[str(s["roce_tc"])]
    assert ecn["min-threshold"] == s["ecn"]["min_threshold_kb"] * 1024
    assert ecn["max-threshold"] == s["ecn"]["max_threshold_kb"] * 1024
    assert ecn["probability"] == s["ecn"]["probability_pct"] and ecn["ecn"] == "enable"
    assert qos["egress-scheduler"]["default-global"]["traffic-class"][str(s["cnp_tc"])]["mode"] == "strict"
    wd = qos["pfc-watchdog"]
    # NVUE detects a storm after polling-interval x robustness: exactly the design's time, not rounded up
    assert wd["polling-interval"] * wd["robustness"] == s["pfc_watchdog"]["detection_ms"]
    assert f"restoration time ({s['pfc_watchdog']['restoration_ms']} ms) has no NVUE setting" in text
    swp = next(v for k, v in doc["interface"].items() if k.startswith("swp") and "type" in v)
    assert swp["link"]["mtu"] == s["mtu"]


CHECK = {"sonic": _check_sonic, "eos": _check_eos, "nvue": _check_nvue}


@pytest.mark.parametrize("os", sorted(SWITCH_FOR_OS))
@pytest.mark.parametrize("change", [None, *CHANGES], ids=lambda c: "base" if c is None else c[0])
def test_each_lossless_value_reaches_the_output(os, change):
    text = _leaf(os, change)
    CHECK[os](text, _settings(change))
    if change is not None:
        assert text != _leaf(os), f"{os}: changing {change[0]} left the output unchanged"
