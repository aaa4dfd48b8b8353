"""Sizing from what is built, and growth as its own BOM line (issue 25; validator/expand/growth.py).

Hand arithmetic, from the catalog figures each test names: a Tomahawk 5 switch (sonic-th5-64x800) has
64 x 800G OSFP cages = 128 x 400G ports, so at 1:1 a leaf takes at most 64 x 400G down and 64 x 400G up;
a DGX H100 has 8 ConnectX-7 at 400G, one per rail.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.builders import topology_of, training
from validator.derive import Derived
from validator.derive.pairs import summarize
from validator.expand.topology import Topology, build_topology
from validator.read.design_file import parse_design
from validator.resolve.catalog import builtin_catalog
from validator.resolve.resolved import resolve

TH5 = "sonic-th5-64x800"


def _fabric(**extra: Any) -> dict[str, Any]:
    return {"type": "roce", "speed_gbps": 400, "topology": "rail-optimized",
            "tiers": {"leaf": {"switch": TH5}, "spine": {"switch": TH5}}, **extra}


def _topology(servers: int, **extra: Any) -> Topology:
    return topology_of(training({"server": "dgx-h100", "count": servers, "servers_per_rack": 4}, _fabric(**extra)))


def _bundles(topo: Topology) -> dict[tuple[str, str], int]:
    return {(b.a, b.z): b.count for b in summarize(topo, "compute").bundles}


def _derived(servers: int, **extra: Any) -> Derived:
    design = training({"server": "dgx-h100", "count": servers, "servers_per_rack": 4}, _fabric(**extra))
    loaded, model = parse_design(yaml.safe_dump(design, sort_keys=False), "built.yaml")
    return Derived(build_topology(resolve(model, loaded, builtin_catalog())))


def test_32_servers_buy_what_32_servers_need():
    """32 DGX H100 = 256 x 400G server links, 32 per rail: one leaf per rail (32 <= 64 downlinks), 8 leaves,
    each with 32 downlinks in use. At 1:1 each needs 32 x 400G uplinks: 8 x 32 = 256 leaf-spine links (not
    8 x 64 = 512). 256 links fit 2 spines of 128 ports, but a training fabric gets at least 4 (TRN009's
    min_spines, the 1-SU SuperPOD): 32 uplinks / 4 = 8 links per leaf-spine pair, 8 x 8 = 64 ports used per
    spine. Before issue 25: 64 uplinks per leaf, 512 links, 4 spines."""
    topo = _topology(32)
    fab = topo.fabrics["compute"]
    leaf = fab.tier("leaf")
    assert leaf is not None
    assert (fab.count("leaf"), fab.count("spine"), fab.count("core")) == (8, 4, 0)
    assert (leaf.down_ports, leaf.up_ports) == (32, 32)
    assert _bundles(topo) == {("server", "leaf"): 256, ("leaf", "spine"): 256}


def test_4_servers_need_32_uplinks_not_512():
    """4 DGX H100 = 32 links, 4 per rail leaf: 4 uplinks per leaf, 8 x 4 = 32 leaf-spine links (the issue's
    fixture needed 544 = 32 + 8 x 64); the 4 uplinks stripe over 4 spines, one link each."""
    topo = _topology(4)
    fab = topo.fabrics["compute"]
    assert (fab.count("leaf"), fab.count("spine")) == (8, 4)
    assert _bundles(topo) == {("server", "leaf"): 32, ("leaf", "spine"): 32}


def test_partial_last_su_is_uplinked_for_its_servers():
    """100 DGX H100 in SUs of 64 (the servers one 64-downlink rail leaf takes): SU 1 full (8 leaves x 64 used,
    64 uplinks each), SU 2 with 36 servers (8 leaves x 36 used). 16 leaves x 64 uplinks need 16 x 64 / 128 = 8
    spines (64 / 8 = 8 links per pair). SU 2's leaves need 36 uplinks, rounded up to a multiple of the 8 spines
    = 40 (5 links per pair): 8 x 64 + 8 x 40 = 832 leaf-spine links for 800 server links (not 16 x 64 = 1,024)."""
    topo = _topology(100)
    fab = topo.fabrics["compute"]
    assert (fab.count("leaf"), fab.count("spine")) == (16, 8)
    assert fab.plane.partial_from == 8 and fab.plane.partial_ups == (40,) * 8
    assert _bundles(topo) == {("server", "leaf"): 800, ("leaf", "spine"): 832}


def test_declared_growth_builds_the_full_su():
    """growth: {scalable_units: 1} builds the 64-server SU the leaves can take: 64 uplinks per leaf,
    8 x 64 = 512 links, 512 / 128 = 4 spines; 2 SUs: spines for 16 leaves x 64 = 1,024 links = 8 spines."""
    one = _topology(32, growth={"scalable_units": 1})
    assert one.fabrics["compute"].count("spine") == 4 and _bundles(one)[("leaf", "spine")] == 512
    two = _topology(32, growth={"scalable_units": 2})
    assert two.fabrics["compute"].count("spine") == 8 and _bundles(two)[("leaf", "spine")] == 512
    legacy = _topology(32, planned_scalable_units=2)
    assert legacy.fabrics["compute"].count("spine") == 8


def test_growth_is_its_own_bom_line():
    """The growth line carries the difference between the design as declared and the same design built for
    its 32 servers: +256 leaf-spine links (512 - 256), the same 12 switches; its price is the capex
    difference, which the switch, transceiver and cable lines already include (counted once)."""
    lean, grown = _derived(32).bom, _derived(32, growth={"scalable_units": 1}).bom
    assert not [i for i in lean.items if i.category == "growth"] and "growth_usd" not in lean.totals
    line = next(i for i in grown.items if i.category == "growth")
    assert line.included_in and line.extended_price is None
    assert "+0 switches" in line.description

    def priced(bom: Any, cats: tuple[str, ...]) -> float:
        return sum(i.extended_price or 0 for i in bom.items if i.category in cats)

    hardware = ("switch", "transceiver", "cable")
    assert line.unit_price == round(priced(grown, hardware) - priced(lean, hardware), 2)
    assert line.unit_price == round(grown.totals["capex_usd"] - lean.totals["capex_usd"], 2)
    assert grown.totals["growth_usd"] == line.unit_price and line.unit_price > 0
    qty = {c: grown.totals["qty_by_category"][c] - lean.totals["qty_by_category"][c] for c in hardware}
    assert f"+{qty['transceiver']:,} transceivers" in line.description
    # 256 more 400G links, two ends each, on twin-port (2 x 400G) modules: at least 256 modules more
    assert qty["transceiver"] >= 256


def test_diff_shows_the_cost_of_growth(tmp_path):
    """`diff` of a design before and after declaring growth: the growth row goes from $0 to the growth line's
    price, and the capex rises by the same amount."""
    from tests.helpers import cli

    base = training({"server": "dgx-h100", "count": 32, "servers_per_rack": 4}, _fabric())
    head = training({"server": "dgx-h100", "count": 32, "servers_per_rack": 4},
                    _fabric(growth={"scalable_units": 1}))
    paths = []
    for name, design in (("base.yaml", base), ("head.yaml", head)):
        path = tmp_path / name
        path.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
        paths.append(str(path))
    code, out, err = cli("diff", *paths, "--format", "json")
    assert code == 0, err
    metrics = json.loads(out)["designs"][0]["metrics"]
    growth = _derived(32, growth={"scalable_units": 1}).bom.totals["growth_usd"]
    assert metrics["growth_usd"]["base"] == 0 and metrics["growth_usd"]["head"] == growth
    assert metrics["capex"]["head"] - metrics["capex"]["base"] == pytest.approx(growth)
