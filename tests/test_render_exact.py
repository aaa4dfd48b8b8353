"""Day-one checks of the rendered configurations: every PFC port of every lossless fabric has a
lossless buffer profile (counted against the link arithmetic of the example designs), and the PFC
watchdog the design sets is the one each OS gets, to the millisecond."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import DESIGNS, FIXTURES
from validator.emit.render import render_configs
from validator.pipeline import load_topology

BASE = yaml.safe_load((FIXTURES / "render" / "small-eos.yaml").read_text())
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _sonic_lossless_ports(text: str) -> tuple[int, int]:
    """(PFC-enabled ports, those with a lossless BUFFER_PG profile and a cable length on every PFC priority)."""
    c = json.loads(text)
    pfc = {port: v["pfc_enable"].split(",") for port, v in c.get("PORT_QOS_MAP", {}).items() if v.get("pfc_enable")}
    pgs, profiles = c.get("BUFFER_PG", {}), c.get("BUFFER_PROFILE", {})
    cables = c.get("CABLE_LENGTH", {}).get("AZURE", {})
    covered = 0
    for port, prios in pfc.items():
        ok = port in cables
        for p in prios:
            profile = pgs.get(f"{port}|{p}", {}).get("profile")
            # a static lossless profile (traditional model) or NULL: SONiC computes it (dynamic model)
            ok = ok and (profile == "NULL" or "xoff" in profiles.get(profile or "", {}))
        covered += ok
    return len(pfc), covered


def test_every_pfc_port_of_the_roce_example_has_a_lossless_buffer_profile():
    configs = {i.path: i.text for i in render_configs(load_topology(DESIGNS / "roce-h100-2tier.yaml"))}
    counted: dict[str, list[int]] = {}
    for path, text in configs.items():
        if path.endswith("config_db.json"):
            fabric = path.split("/")[1]
            ports, covered = _sonic_lossless_ports(text)
            total = counted.setdefault(fabric, [0, 0])
            total[0] += ports
            total[1] += covered
    # compute: 256 DGX x 8 links at 400G = 2,048 leaf downlinks; a 1:1 Tomahawk 5 leaf has 64 down and 64 up
    # 400G ports, so 2,048 uplinks, counted at the leaf and at the spine: 2,048 + 2 x 2,048 = 6,144 ports.
    # storage: 256 DGX x 2 + 32 storage nodes x 2 = 576 links at 200G; 128 down ports per leaf -> 5 leaves,
    # 4 full (128 down) and the fifth with 576 - 4 x 128 = 64; uplinks follow the used downlinks (issue 25):
    # 4 x 128 + 64 = 576 uplinks at both ends: 576 + 2 x 576 = 1,728 ports. (The in-band fabric runs Cumulus.)
    assert counted == {"compute": [6144, 6144], "storage": [1728, 1728]}


def test_every_pfc_port_of_the_spectrum_x_example_has_a_cable_length_pfc_profile():
    configs = {i.path: i.text for i in render_configs(load_topology(DESIGNS / "b300-spectrum-x-dual-plane.yaml"))}
    ports = covered = 0
    for path, text in configs.items():
        if not (path.startswith("configs/compute/") and path.endswith("startup.yaml")):
            continue
        body = yaml.load(text, Loader=_LOADER)[1]["set"]
        profiles = body["qos"]["pfc"]
        pfc = sorted(body["qos"]["pfc"]["default-global"]["switch-priority"])
        for name, port in body["interface"].items():
            if not name.startswith("swp") or "type" not in port:
                continue
            ports += 1
            profile = profiles.get(port.get("qos", {}).get("pfc", {}).get("profile", ""), {})
            covered += bool(profile.get("cable-length")) and sorted(profile.get("switch-priority", {})) == pfc
    assert ports > 0 and covered == ports


def _design(switch: str, detection: int, restoration: int | None) -> dict[str, Any]:
    design = copy.deepcopy(BASE)
    fabric = design["fabrics"]["compute"]
    fabric["tiers"] = {"leaf": {"switch": switch}, "spine": {"switch": switch}}
    wd = fabric["lossless"]["switch"]["pfc_watchdog"]
    wd["detection_ms"] = detection
    if restoration is None:
        wd.pop("restoration_ms", None)
    else:
        wd["restoration_ms"] = restoration
    return design


def _leaf(design: dict[str, Any], suffix: str) -> str:
    return next(i.text for i in render_configs(topology_of(design)) if "leaf" in i.path and i.path.endswith(suffix))


@pytest.mark.parametrize("detection", [250, 200, 1300])
def test_the_watchdog_detection_time_reaches_every_os_exactly(detection):
    sonic = json.loads(_leaf(_design("sonic-th5-64x800", detection, 400), "config_db.json"))
    port = next(iter(sonic["PORT"]))
    assert sonic["PFC_WD"][port]["detection_time"] == str(detection)
    assert int(sonic["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"]) <= detection      # SONiC polls within the time
    eos = _leaf(_design("arista-7060x6-64pe", detection, 400), ".cfg")
    assert f"priority-flow-control pause watchdog default timeout {detection / 1000:g}\n" in eos
    nvue_text = _leaf(_design("sn5600", detection, None), "startup.yaml")
    wd = yaml.load(nvue_text, Loader=_LOADER)[1]["set"]["qos"]["pfc-watchdog"]
    assert wd["polling-interval"] * wd["robustness"] == detection
    assert f"detection {detection} ms = polling-interval {wd['polling-interval']} ms x robustness {wd['robustness']}" \
        in nvue_text


def test_every_catalog_os_but_the_subnet_manager_has_a_renderer_and_its_data():
    """An OS in the catalog's `os` literal is either rendered by a plug-in with its capabilities recorded
    (watchdog grid, lossless headroom, management names), or is the InfiniBand subnet manager."""
    import typing

    from validator.base.resources import load_data
    from validator.emit.render.switch_os import PLUGINS, plugin_for
    from validator.resolve.catalog.entries import Switch

    data = {k: v["value"] for k, v in load_data("switch_os.yaml").items() if isinstance(v, dict) and "value" in v}
    names = set(typing.get_args(typing.get_type_hints(Switch)["os"]))
    assert {p.name for p in PLUGINS} == names - {"opensm"}
    for os in names - {"opensm"}:
        plugin = plugin_for(os)
        assert plugin is not None and plugin.template.endswith(".j2")
        assert os in data["pfc_watchdog_timers"] and os in data["lossless_headroom"]
        assert os in data["mgmt_interface"] and os in data["mgmt_vrf"]
