"""Cages are physical: every link end sits in one cage of its device, a cage holds one module or one cable
plug, and the BOM buys one module per cage that holds one (validator/derive/cages.py, tally.py).

The property test walks the links of generated designs (dual-plane NICs, odd server counts, partial scalable
units, twin-port cages, 200G breakouts, storage nodes and UFM appliances) and recomputes each link end's cage
from the port layout and the server's cage sharing, independently of the plan's numbering; the hand checks
write out the arithmetic of the dual-plane B300 example and a two-SU GB200 SuperPOD."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.builders import topology_of, training
from tests.helpers import DESIGNS
from tests.invariants import check_port_truth
from validator.derive import Derived
from validator.derive.links import link_tuples
from validator.derive.media import fits
from validator.expand.topology import SWITCH_ROLES, Topology
from validator.pipeline import load_topology

SERVERS = [("dgx-h100", [400]), ("dgx-b300", [800, 400]), ("gb200-nvl72-tray", [400]), ("hgx-h100", [400])]
SWITCHES = {400: ["qm9700", "sn5600", "sonic-th5-64x800"], 800: ["q3400", "sn5600"], 200: ["qm9700"]}


@st.composite
def designs(draw: st.DrawFn) -> dict[str, Any]:
    server, speeds = draw(st.sampled_from(SERVERS))
    speed = draw(st.sampled_from(speeds))
    switch = draw(st.sampled_from(SWITCHES[speed]))
    per_rack = 18 if server.startswith("gb200") else draw(st.sampled_from([1, 2, 4]))
    count = draw(st.integers(1, 3)) * per_rack if server.startswith("gb200") else draw(st.integers(1, 41))
    topology = draw(st.sampled_from(["rail-optimized", "fat-tree"]))
    kind = "infiniband" if switch.startswith("q") else "roce"
    fabric: dict[str, Any] = {"type": kind, "speed_gbps": speed, "topology": topology,
                              "tiers": {"leaf": {"switch": switch}}}
    if draw(st.booleans()):
        fabric["tiers"]["spine"] = {"switch": switch}
        fabric["tiers"]["leaf"]["placement"] = draw(st.sampled_from(["rack", "row", "central"]))
    if server == "dgx-b300" and speed == 400 and draw(st.booleans()):
        fabric.update({"planes": 2, "plane_of": "port"})              # ConnectX-8: one cage, two planes
    if topology == "rail-optimized" and draw(st.booleans()):
        fabric["scalable_unit"] = {"servers": draw(st.sampled_from([8, 16, 32]))}   # partial units
    if speed == 400 and draw(st.booleans()):
        fabric["extra_endpoints"] = [{"name": "ufm", "count": 1, "ports": draw(st.integers(1, 4))}]
    extra: dict[str, Any] = {}
    if draw(st.booleans()):                                           # a 200G storage fabric of breakouts
        extra = {"fabrics": {"storage": {"type": "infiniband", "speed_gbps": 200, "topology": "fat-tree",
                                         "tiers": {"leaf": {"switch": "qm9700"}}}},
                 "storage": {"type": "parallel-fs", "capacity_tb": 100,
                             "nodes": {"count": draw(st.integers(1, 5)), "ports": draw(st.integers(1, 3))}}}
    return training({"server": server, "count": count, "servers_per_rack": per_rack}, fabric, **extra)


def _cage(topology: Topology, fabric: str, role: str, index: int, port: int | str) -> tuple[Any, ...]:
    """A link end's cage from first principles: a switch port's slot, a server link's cage (links numbered
    NIC by NIC, `ports_per_cage` at the fabric's speed per cage), an appliance port's own cage."""
    if role in SWITCH_ROLES:
        tier = topology.fabrics[fabric].tier(role)
        assert tier is not None and isinstance(port, int)
        slot = tier.layout.slot(port)
        return (fabric, role, index, "switch", slot.group, slot.cage)
    if role == "server" and isinstance(port, int) and fabric != "oob":
        return (fabric, role, index, "nic", (port - 1) // topology.resolved.fabrics[fabric].ports_per_cage)
    return (fabric, role, index, "port", port)


class _Walk:
    """What the links put in each cage, recomputed link by link from `_cage`."""

    def __init__(self, derived: Derived) -> None:
        self.held: dict[tuple[Any, ...], set[str]] = defaultdict(set)
        self.lanes: Counter[tuple[Any, ...]] = Counter()
        self.peers: dict[tuple[Any, ...], set[tuple[Any, ...]]] = defaultdict(set)
        self.straight: set[tuple[Any, ...]] = set()
        self.split: set[tuple[Any, ...]] = set()
        self.per_link: Counter[str] = Counter()
        self.links = 0
        topology, cp = derived.topology, derived.cabling.cage_plan
        for fabric in topology.fabrics:
            for a_role, a_idx, a_port, z_role, z_idx, z_port, _speed in link_tuples(topology, fabric):
                m = cp.media(self.links)
                self.links += 1
                a = _cage(topology, fabric, a_role, a_idx, a_port)
                z = _cage(topology, fabric, z_role, z_idx, z_port)
                self.lanes.update((a, z))
                self.peers[a].add(z)
                self.peers[z].add(a)
                cable = m.cable.id if m.cable else "unresolved"
                self.held[a].add(m.a_transceiver.id if m.a_transceiver else cable)
                self.held[z].add(m.z_transceiver.id if m.z_transceiver else cable)
                if m.cable is not None and m.cable.links_per_cable > 1 and m.cable.type != "fiber":
                    if m.cable.split:
                        self.split.add((cable, z))
                    else:
                        self.straight.add((cable, a, z))
                else:
                    self.per_link[cable] += 1


def check_cages(derived: Derived) -> None:
    """One module per cage, modules bought = cages holding one, lanes within the cage, cables per cage."""
    topology, tally = derived.topology, derived.cabling.tally
    walk = _Walk(derived)
    assert walk.links == tally.links
    two = {c: parts for c, parts in walk.held.items() if len(parts) != 1}
    assert not two, f"cages with two kinds of module: {list(two.items())[:3]}"
    catalog = topology.resolved.catalog
    modules: Counter[tuple[str, str, str]] = Counter()
    for cage, parts in walk.held.items():
        part = next(iter(parts))
        entry = catalog.find("transceiver", part)
        if entry is not None:
            assert entry.ports >= walk.lanes[cage], (cage, part, walk.lanes[cage])   # serves every lane
            modules[(cage[0], part, "switch" if cage[1] in SWITCH_ROLES else "node")] += 1
    bought: Counter[tuple[str, str, str]] = Counter()
    for (fabric, part, _role), devices in tally.switch_xcvr.items():
        bought[(fabric, part, "switch")] += sum(devices.values())
    for (fabric, part, _role, _rack), n in tally.node_xcvr.items():
        bought[(fabric, part, "node")] += n
    assert bought == modules                 # modules bought = the cages that hold them
    cables: Counter[str] = Counter()
    for (_fabric, part, _length), n in tally.cables_bought.items():
        cables[part] += n
    assert cables == walk.per_link + Counter(key[0] for key in walk.straight | walk.split)
    for _cable, a, z in walk.straight:       # a straight multi-link cable joins two cages lane to lane
        assert walk.peers[a] == {z} and walk.peers[z] == {a}
    for _cable, z in walk.split:             # a splitter's split plugs each go in a single-lane cage
        assert all(walk.lanes[a] == 1 for a in walk.peers[z])
    for (fabric, part, role, _rack) in tally.node_xcvr:     # adapter modules fit the NIC's cage
        if role == "server":
            x = catalog.transceiver(part)
            assert fits(x.form_factor, x.top, derived.cabling.cage(fabric, "server", True)), (fabric, part)


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(designs())
def test_every_accepted_design_has_one_module_per_cage(design: dict[str, Any]) -> None:
    topology = topology_of(design)
    assume(all(f.buildable for f in topology.fabrics.values()))
    check_port_truth(topology)                # every port used once
    check_cages(Derived(topology))


def test_example_designs_have_one_module_per_cage() -> None:
    for name in ("b300-spectrum-x-dual-plane", "superpod-h100-4su", "gb200-nvl36x2-inference",
                 "gb200-nvl72-mixtral", "roce-h100-2tier"):
        check_cages(Derived(load_topology(DESIGNS / f"{name}.yaml")))


def _bought(derived: Derived, category: str) -> dict[tuple[str, str], int]:
    out: Counter[tuple[str, str]] = Counter()
    for i in derived.bom.items:
        if i.category == category and i.fabric == "compute":
            out[(i.part, i.installed_in)] += i.qty - i.spares
    return dict(out)


def test_dual_plane_b300_buys_one_module_per_connectx8_cage() -> None:
    """128 DGX B300 x 8 ConnectX-8 = 1,024 NICs, each one OSFP cage carrying 2 x 400GbE, one lane per plane
    (RA-11337-001; ConnectX-8 firmware notes: no 800GbE on one port). One flat-top twin-port module per cage:
    1,024, not 2,048 single-port modules (two in one cage). The runs are within 50 m, so the twin SR part.
    Per plane 1,024 server links on leaf cages of two 400G lanes = 512 down cages, the same links up = 512 up
    cages; two planes: 2 x (512 + 512) = 2,048 leaf modules; spines take the 2 x 1,024 uplinks two per cage:
    1,024 modules."""
    derived = Derived(load_topology(DESIGNS / "b300-spectrum-x-dual-plane.yaml"))
    assert _bought(derived, "transceiver") == {("mma4z00-ns-flt", "server"): 128 * 8,
                                               ("mma4z00-ns", "leaf"): 2 * (512 + 512),
                                               ("mma4z00-ns", "spine"): 2 * 1024 // 2}
    cat = derived.topology.resolved.catalog
    assert cat.transceiver("mma4z00-ns-flt").top == cat.nic("cx8").top == "flat"


def test_gb200_superpod_twin_port_cages_get_no_half_counted_dac() -> None:
    """Two GB200 SUs (16 NVL72 racks, QM9700 leaf 18 down + 18 up, spine 24 + 24, core 64 down; the table
    design of test_fabric_sizing). Every switch cage is a twin-port OSFP whose two lanes go to two different
    switches or trays (uplink u to switch u mod S), so a straight twin-port DAC (one plug per end) cannot join
    them, and no DAC is bought for two links it cannot carry: 0 DACs. Each cage holds one module:
    leaves 64 x (18 + 18) / 2 = 1,152, spines 48 x (24 + 24) / 2 = 1,152, cores 18 x 64 / 2 = 576, and the
    trays' single-port flat cages 16 racks x 18 trays x 4 = 1,152; one fiber per link: 3 x 1,152."""
    from tests.test_fabric_sizing import ROWS, _design

    row = next(r for r in ROWS if r["family"] == "gb200" and r["su"] == "2")
    derived = Derived(topology_of(_design(row)))
    assert _bought(derived, "transceiver") == {("mma4z00-ns", "leaf"): 64 * (18 + 18) // 2,
                                               ("mma4z00-ns", "spine"): 48 * (24 + 24) // 2,
                                               ("mma4z00-ns", "core"): 18 * 64 // 2,
                                               ("mma4z00-ns400", "server"): 16 * 18 * 4}
    cables = _bought(derived, "cable")
    assert not [p for p, _ in cables if p.startswith(("mcp", "lacc"))]
    assert sum(cables.values()) == 3 * 1152


def test_gb200_nvl36x2_in_rack_links_use_one_splitter_per_leaf_cage() -> None:
    """The NVL36x2 example cables its compute trays to leaves in their own racks. A leaf cage's two lanes go
    to two trays, each a single-port flat-top ConnectX-7 cage: a straight twin DAC cannot, and a finned one
    may not go in a flat cage; the splitter (finned 800G head, two flat 400G ends) can, one per leaf cage:
    288 in-rack links / 2 = 144 splitters."""
    derived = Derived(load_topology(DESIGNS / "gb200-nvl36x2-inference.yaml"))
    in_rack = sum(n for (f, part, _l, a, z), n in derived.cabling.tally.cable_runs.items()
                  if f == "compute" and a == z)
    assert in_rack == 288
    assert _bought(derived, "cable")[("mcp7y00", "2 m")] == 288 // 2


def test_ufm_and_storage_ports_get_single_port_adapter_modules() -> None:
    """The UFM appliance's 4 ports and each storage node port are single-port adapter cages: one single-port
    flat module each (RA-11333-001 lists single-port flat optics at the UFM end), never a finned twin-port
    switch module shared by two devices. SuperPOD example: 4 UFM ports; 32 storage ports."""
    derived = Derived(load_topology(DESIGNS / "superpod-h100-4su.yaml"))
    assert _bought(derived, "transceiver")[("mma4z00-ns400", "ufm")] == 4
    nodes = derived.topology.resolved.design.storage.nodes
    storage = {k: i.qty - i.spares for i in derived.bom.items if i.category == "transceiver"
               and i.installed_in == "storage" for k in [i.part]}
    assert storage == {"mms4x00-ns400-200g": nodes.count * nodes.ports}
