"""The out-of-band management switches get configurations: every OOB switch of the topology, in its
OS, with the management VLANs and the addressing the routed fabrics' configurations use."""

from __future__ import annotations

import ipaddress
import json

import yaml

from tests.helpers import DESIGNS
from validator.emit.render import render_configs
from validator.pipeline import load_topology

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def test_every_oob_switch_is_configured_with_the_management_vlans_the_fabrics_use():
    topology = load_topology(DESIGNS / "roce-h100-2tier.yaml")
    items = {i.path: i.text for i in render_configs(topology)}
    oob = {p: yaml.load(t, Loader=_LOADER)[1]["set"] for p, t in items.items() if p.startswith("configs/oob/")}
    # every OOB switch of the topology (the rack plan's 9 SN2201 leaves and 1 SN4600C spine) has a configuration
    fab = topology.fabrics["oob"]
    assert len(oob) == fab.switches == 10
    compute = json.loads(items["configs/compute/compute-spine0001.config_db.json"])
    (mgmt_key, mgmt), = compute["MGMT_INTERFACE"].items()
    compute_ip = ipaddress.ip_interface(mgmt_key.split("|")[1])
    # the compute spine's management port is an access port of the VLAN whose subnet holds its address
    leaf_name, port = compute["MGMT_PORT"]["eth0"]["description"].split(" ")[0].split(":")
    leaf = oob[f"configs/oob/{leaf_name}.startup.yaml"]
    vlan = leaf["interface"][port]["bridge"]["domain"]["br_default"]["access"]
    spine = oob["configs/oob/oob-spine0001.startup.yaml"]
    svi = spine["interface"][f"vlan{vlan}"]["ip"]["address"]
    (gateway,) = (ipaddress.ip_interface(a) for a in svi)
    assert compute_ip in gateway.network and str(gateway.ip) == mgmt["gwaddr"]
    # leaf uplinks are trunks, every server BMC port is in one hosts VLAN, the same on every leaf
    access = {p["bridge"]["domain"]["br_default"].get("access") for cfg in oob.values()
              for name, p in cfg["interface"].items() if name.startswith("swp") and "node" in p["description"]}
    assert len(access) == 1 and None not in access
    assert all(p["bridge"]["domain"]["br_default"]["untagged"] == "none"
               for name, p in leaf["interface"].items() if name.startswith("swp") and "oob-spine" in p["description"])
    notes = items["configs/NOTES.md"]
    assert "Out-of-band (10 switches)" in notes
