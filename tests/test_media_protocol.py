"""A link takes only modules and cables that carry its fabric's protocol (issue: an Ethernet fabric was given
InfiniBand-only XDR optics). NVIDIA lists the NDR/400GbE twin-port parts for both protocols ("The MMS4X00-NS
transceiver includes both InfiniBand and Ethernet protocols", MMS4X00-NS overview), the XDR MMS4A00/MMS4A20
for InfiniBand and the MMS4C11 1.6T module for Ethernet (NVIDIA LinkX listing, transceivers.yaml); a link that
only a part of the other protocol would serve is left without media, and NET011 says why."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import topology_of, training
from validator.derive import Derived
from validator.derive.media import MediaChooser
from validator.pipeline import analyze
from validator.read.config import RunConfig
from validator.resolve.catalog import Catalog, builtin_catalog
from validator.resolve.catalog.check import catalog_gaps
from validator.resolve.prices import price_table

NET011 = Path(__file__).parent / "rules" / "NET011"
FLAT224, FINNED224 = ("OSFP224", "flat"), ("OSFP224", "finned")


def _ids(media: Any) -> tuple[str | None, ...]:
    return tuple(p.id if p else None for p in (media.a_transceiver, media.z_transceiver, media.cable))


def test_the_built_in_catalog_states_the_protocols_of_every_module_and_cable() -> None:
    cat = builtin_catalog()
    parts = [*cat.entries["transceiver"].values(), *cat.entries["cable"].values()]
    assert parts and all(p.protocols for p in parts), [p.id for p in parts if not p.protocols]
    # NVIDIA's listing: NDR/400GbE parts both; XDR 1.6T/800G (MMS4A*) InfiniBand; MMS4C11 Ethernet
    for part in ("mma4z00-ns", "mms4x00-ns", "mms4x00-nm", "mms4x00-nm-flt", "mcp4y10", "mcp7y00"):
        assert set(cat.entries["transceiver" if part.startswith("mm") else "cable"][part].protocols or ()) \
            == {"infiniband", "ethernet"}, part
    assert all(t.protocols == ["infiniband"] for t in cat.entries["transceiver"].values() if t.id.startswith("mms4a"))
    assert all(t.protocols == ["ethernet"] for t in cat.entries["transceiver"].values() if t.id.startswith("mms4c11"))
    prototype = cat.transceiver("mms4c10-xm800")
    assert "PROTOTYPE" in prototype.source and prototype.power_w == 15    # 15 W max, NVIDIA's listing


def test_catalog_check_names_a_module_or_cable_that_does_not_state_its_protocols() -> None:
    builtin = builtin_catalog()
    assert not [g for g in catalog_gaps(builtin, price_table()) if g.field == "protocols"]
    unstated = builtin.transceiver("mms4c11-xm").model_copy(update={"protocols": None})
    catalog = builtin.merged(Catalog({**{k: {} for k in builtin.entries}, "transceiver": {"mms4c11-xm": unstated}}))
    gaps = [(g.id, g.field) for g in catalog_gaps(catalog, price_table()) if g.field == "protocols"]
    assert gaps == [("mms4c11-xm", "protocols")]


def test_a_1_6t_switch_link_takes_the_part_of_its_protocol() -> None:
    # A spine-core link of 300 m between liquid-cooled OSFP224 cages at 800G (2 ports a cage): the XDR MMS4A00 RHS
    # on InfiniBand, the Spectrum-X MMS4C11 RHS on Ethernet; without a protocol the first by id (MMS4A00)
    chooser = MediaChooser(builtin_catalog())
    ib = chooser.choose(800, 300, False, False, 2, FLAT224, FLAT224, None, 2, protocol="infiniband")
    eth = chooser.choose(800, 300, False, False, 2, FLAT224, FLAT224, None, 2, protocol="ethernet")
    assert _ids(ib) == ("mms4a00-xm-flt", "mms4a00-xm-flt", "fiber-mpo12-smf")
    assert _ids(eth) == ("mms4c11-xm-flt", "mms4c11-xm-flt", "fiber-mpo12-smf")
    # a ConnectX-8 cage to a leaf cage at 400G (2 planes a NIC cage, 4 ports a switch cage): the split modes
    nic = chooser.choose(400, 20, False, True, 2, FLAT224, FLAT224, None, 4, protocol="ethernet")
    assert _ids(nic)[:2] == ("mms4c10-xm800-2x400g", "mms4c11-xm-flt-4x400g")
    nic_ib = chooser.choose(400, 20, False, True, 2, FLAT224, FLAT224, None, 4, protocol="infiniband")
    assert _ids(nic_ib)[:2] == ("mms4a20-xm-2x400g", "mms4a00-xm-flt-4x400g")


def test_a_link_only_another_protocol_would_serve_says_why() -> None:
    # 1,000 m at 800G between air-cooled OSFP224 cages: only the 2 km 2xFR4 reaches, and the catalog's one
    # (MMS4A50-XM) is XDR InfiniBand: an Ethernet link is left without media, naming the cage and the reason
    chooser = MediaChooser(builtin_catalog())
    ib = chooser.choose(800, 1000, False, False, 2, FINNED224, FINNED224, None, 2, protocol="infiniband")
    assert _ids(ib) == ("mms4a50-xm", "mms4a50-xm", "fiber-lc-smf")
    eth = chooser.choose(800, 1000, False, False, 2, FINNED224, FINNED224, None, 2, protocol="ethernet")
    assert eth.kind == "unresolved" and eth.cable is None
    assert eth.unfit == "OSFP224 finned-top (infiniband modules only, no ethernet one)"
    # beyond every part's reach (3 km) the protocol is not the reason: no cage named, NET005's case
    far = chooser.choose(800, 3000, False, False, 2, FINNED224, FINNED224, None, 2, protocol="ethernet")
    assert far.kind == "unresolved" and far.unfit == ""


def _qsfp_dd_design(tmp_path: Path, protocols: list[str]) -> Path:
    """NET011's QSFP-DD leaves (tests/rules/NET011) with a design catalog's QSFP-DD 2 x 400G module of the
    given protocols: the only module that fits the leaf cages."""
    (tmp_path / "catalog").mkdir()
    shutil.copy(NET011 / "catalog" / "qsfp-dd-leaf.yaml", tmp_path / "catalog")
    module = yaml.safe_load((NET011 / "catalog" / "qsfp-dd-400g-module.yaml").read_text())
    module["entries"][0]["protocols"] = protocols
    (tmp_path / "catalog" / "qsfp-dd-400g-module.yaml").write_text(yaml.safe_dump(module))
    text = (NET011 / "boundary.yaml").read_text()
    (tmp_path / "design.yaml").write_text(text)
    return tmp_path / "design.yaml"


def test_net011_names_the_protocol_when_only_an_infiniband_module_fits(tmp_path: Path) -> None:
    ib_only = _qsfp_dd_design(tmp_path, ["infiniband"])
    findings = [f for f in analyze(ib_only, "design.yaml", RunConfig()).findings if f.rule == "NET011"]
    assert findings and all("QSFP-DD cage at 400G (infiniband modules only, no ethernet one)" in f.message
                            for f in findings), [f.message for f in findings]


def test_the_same_module_listed_for_ethernet_serves_the_roce_leaves(tmp_path: Path) -> None:
    both = _qsfp_dd_design(tmp_path, ["infiniband", "ethernet"])
    analysis = analyze(both, "design.yaml", RunConfig())
    assert "NET011" not in {f.rule for f in analysis.findings}
    assert analysis.derived is not None
    parts = {part for (fab, part, _role), _n in analysis.derived.cabling.tally.switch_xcvr.items() if fab == "compute"}
    assert "test-qsfpdd-2x400g-dr4" in parts


def test_a_part_that_lists_no_protocol_is_an_error_not_a_part_no_link_takes(tmp_path: Path) -> None:
    # `protocols: []` would carry no link (and the catalog check would take it for "not stated"): refused
    design = _qsfp_dd_design(tmp_path, [])
    errors = [f for f in analyze(design, "design.yaml", RunConfig()).findings if f.severity == "error"]
    assert any("qsfp-dd-400g-module.yaml" in (f.file or "") and "protocols" in f.message for f in errors), \
        [(f.rule, f.file, f.message) for f in errors]


@st.composite
def fabrics(draw: st.DrawFn) -> dict[str, Any]:
    """A two-tier fabric of either protocol, on 400G NDR/400GbE switches or on 800G/400G 200G-lane ones, with
    DGX H100 (ConnectX-7) or DGX B300 (ConnectX-8) servers."""
    kind = draw(st.sampled_from(["infiniband", "roce", "ethernet"]))
    b300 = draw(st.booleans())
    if kind == "infiniband":
        switch = "q3400" if b300 else "qm9700"
    else:
        switch = draw(st.sampled_from(["sn6600-ld"] if b300 else ["sn5600", "sonic-th5-64x800"]))
    # (Q3400 cages at 400G would want a finned 4 x 400G split module, which the catalog does not have: 800G there)
    speed = 400 if not b300 else 800 if switch == "q3400" else draw(st.sampled_from([400, 800]))
    count = draw(st.integers(2, 40))
    fabric: dict[str, Any] = {"type": kind, "speed_gbps": speed, "topology": draw(st.sampled_from(
        ["rail-optimized", "fat-tree"])), "tiers": {"leaf": {"switch": switch}, "spine": {"switch": switch}}}
    return training({"server": "dgx-b300" if b300 else "dgx-h100", "count": count,
                     "servers_per_rack": draw(st.sampled_from([2, 4]))}, fabric)


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics())
def test_every_chosen_module_and_cable_carries_its_links_protocol(design: dict[str, Any]) -> None:
    topology = topology_of(design)
    tally = Derived(topology).cabling.tally
    cat = topology.resolved.catalog
    for fabric in topology.fabrics:
        protocol = "infiniband" if getattr(topology.resolved.design.fabrics, fabric).type == "infiniband" \
            else "ethernet"
        modules = {part for (fab, part, _r, _k) in tally.node_xcvr if fab == fabric} | \
            {part for (fab, part, _r) in tally.switch_xcvr if fab == fabric}
        cables = {part for (fab, part, _length) in tally.cables if fab == fabric and not part.startswith("UNRES")}
        assert modules and cables, fabric        # every generated fabric's links get media: nothing vacuous
        for part in modules:
            assert protocol in (cat.transceiver(part).protocols or ()), (fabric, protocol, part)
        for part in cables:
            assert protocol in (cat.entries["cable"][part].protocols or ()), (fabric, protocol, part)
