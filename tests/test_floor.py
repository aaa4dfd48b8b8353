"""The floor plan (issue 25): rows and halls as `site.layout` says, every management port once and
near its switch, network racks within their air limit. Expected figures are hand arithmetic."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.builders import training
from tests.helpers import DESIGNS, FIXTURES
from validator.derive.links import iter_links
from validator.derive.media import MediaChooser
from validator.derive.placement import Layout
from validator.expand.racks import floor_spots
from validator.expand.topology import Topology, build_topology
from validator.pipeline import analyze, load_topology
from validator.read.config import RunConfig
from validator.read.design_file import parse_design
from validator.resolve.catalog import Catalog, builtin_catalog
from validator.resolve.resolved import resolve

OOB = {"type": "ethernet", "speed_gbps": 1,
       "tiers": {"leaf": {"switch": "sn2201"}, "spine": {"switch": "sn4600c"}, "core": {"switch": "sn4600c"}}}


def topology_with(design: dict[str, Any], switches: dict[str, dict[str, Any]]) -> Topology:
    """The topology of a design over the built-in catalog plus switches copied from it with changes."""
    base = builtin_catalog()
    extra = Catalog()
    for new_id, change in switches.items():
        source = base.switch(change.pop("from"))
        extra.entries["switch"][new_id] = source.model_copy(update={"id": new_id, **change})
    loaded, model = parse_design(yaml.safe_dump(design, sort_keys=False), "built.yaml")
    return build_topology(resolve(model, loaded, base.merged(extra)))


def test_two_management_ports_each_named_once_and_cabled_in_their_own_row() -> None:
    # 3,072 DGX H100 = 24,576 GPUs on a three-tier RoCE fabric whose spines have two management ports
    compute = {"server": "dgx-h100", "count": 3072, "servers_per_rack": 4}
    fabric = {"type": "roce", "speed_gbps": 400, "topology": "rail-optimized", "pod": {"gpus": 4096},
              "tiers": {"leaf": {"switch": "sn5600"}, "spine": {"switch": "sn5600-2m"},
                        "core": {"switch": "sn5600"}}}
    design = training(compute, fabric, fabrics={"oob": OOB})
    topology = topology_with(design, {"sn5600-2m": {"from": "sn5600", "mgmt_ports": 2}})
    spines = topology.fabrics["compute"].count("spine")
    assert spines > 0 and topology.gpus == 24576
    layout = Layout(topology)
    ends: Counter[tuple[str, object]] = Counter()
    spine_ports: dict[str, set[object]] = {}
    for link in iter_links(topology, "oob"):
        ends[(link.a_device, link.a_port)] += 1
        ends[(link.z_device, link.z_port)] += 1
        if link.a_role == "compute/spine":
            spine_ports.setdefault(link.a_device, set()).add(link.a_port)
            switch = layout.spot(layout.switch("compute", "spine", link.a_index // 2).rack)
            leaf = layout.spot(layout.switch("oob", "leaf", link.z_index).rack)
            assert (leaf.hall, leaf.row) == (switch.hall, switch.row), link
    assert max(ends.values()) == 1, [k for k, n in ends.items() if n > 1][:5]
    assert len(spine_ports) == spines                      # every spine reached, by both its ports
    assert all(ports == {"mgmt1", "mgmt2"} for ports in spine_ports.values())


def test_floor_spots_keep_rows_and_halls() -> None:
    # 6 blocks of 8 racks in rows of 20, 2 rows a hall: two blocks a row (16 racks, 4 left free: a third
    # block of 8 does not straddle), two rows a hall -> 4 blocks a hall, blocks 5 and 6 in hall 2
    spots = floor_spots([8] * 6, 20, 2)
    firsts = [spots[8 * k] for k in range(6)]
    assert firsts == [(0, 0, 0), (0, 0, 8), (0, 1, 0), (0, 1, 8), (1, 0, 0), (1, 0, 8)]
    # a block longer than a row runs on; one longer than a hall runs into the next hall
    assert floor_spots([25], 10, 2)[-1] == (1, 0, 4)
    assert len(set(floor_spots([3, 30, 7, 1], 6, 3))) == 41


def million_gpu_blocks() -> list[int]:
    """The floor blocks of the 1M-GPU site of tests/fixtures/site-1m-gpus.yaml, by hand.

    14,112 GB300 NVL72 racks (18 trays of 4 GPUs: 1,016,064 GPUs) in compute groups of 7 racks (one SU:
    126 trays, one leaf per rail and plane at 400G, 126 of its 256 ports down): 2,016 groups. A group's
    network rack holds its 8 leaves (4 rails x 2 planes, SN6600-LD 2U) and its out-of-band leaf: blocks of
    7 + 1 = 8 racks.
    A pod (and out-of-band zone) of 224 racks is 32 groups; its 2 x 126 spines (2U, 22 in a 48U rack less
    4U reserved; see million_gpu_cores) stand with its middle group (index 15): 14 beside that group's 8
    leaves, 238 in 11 racks of their own; the zone's out-of-band spines and cores (1U and 2U) take one
    more rack there: blocks of 7 + 1 + 11 + 1 = 20. The 8,064 cores (one core layer joining 63 pods per
    plane, sized to the spines that exist: million_gpu_cores) take ceil(8,064 / 22) = 367 central racks,
    the central zone's out-of-band switches one more: 368, in the middle of the floor (before group 2,016 / 2 = 1,008).
    """
    blocks: list[int] = []
    for group in range(2016):
        if group == 1008:
            blocks.append(368)
        blocks.append(20 if group % 32 == 15 else 8)
    return blocks


def test_a_million_gpu_site_lays_out_in_fourteen_halls() -> None:
    # rows of 32 racks, 44 rows a hall (1,408 racks). Blocks of 8 tile a row (4 a row). A pod starting at
    # position 24 of a row: group 0 ends that row; groups 1-14 (14 blocks) fill 3 rows and 16 racks of a
    # 4th; the middle block of 20 does not fit the 16 left and starts a row, group 16 joins it (28), group
    # 17 starts the next; groups 17-31 (15 blocks) fill 3 rows and 24 racks: the next pod starts at 24
    # again, 9 rows on. The first pod starts at 0 and takes 8 rows + 24. So the 63 pods take 8 + 62 x 9 =
    # 566 rows + 24 racks, the central 368 racks 11.5 rows more: 578 rows (+ 1 for the ends), and a
    # block never straddles a hall: at most one more row lost a hall for the pods' middle blocks and 12
    # for the central one. 578 / 44 = 13.1 halls and (578 + 14 + 12) / 44 = 13.7: 14 halls.
    blocks = million_gpu_blocks()
    assert sum(blocks) == 14112 + 2016 + 63 * 12 + 368
    spots = floor_spots(blocks, 32, 44)
    assert spots[-1][0] + 1 == 14
    assert len(set(spots)) == len(spots)                 # no spot used twice
    # a pod's middle block (7 GPU racks + 13 network racks) starts a row and stays in it
    middle = sum(blocks[:15])
    assert spots[middle][2] == 0 and spots[middle + 19][1] == spots[middle][1]


@cache
def million_gpu_topology() -> Topology:
    """The 1M-GPU site's topology (read to expand: about 2 s; the full validate is minutes, see below)."""
    return load_topology(FIXTURES / "scale" / "site-1m-gpus.yaml")


def test_the_million_gpu_design_is_laid_out_so_with_its_out_of_band_zones() -> None:
    topology = million_gpu_topology()
    assert topology.gpus == 1016064 and topology.gpu_racks == 14112
    assert topology.racks.spots == floor_spots(million_gpu_blocks(), 32, 44)     # the blocks above
    oob = topology.fabrics["oob"]
    # 64 zones (63 pods and the centre), each a three-tier tree of its own; one out-of-band leaf in every
    # rack but the 64 racks of the zones' own spines and cores: 14,112 + 2,016 + 63 x 11 + 367
    assert oob.buildable and len(oob.zones) == 64
    assert oob.count("leaf") == 14112 + 2016 + 63 * 11 + 367 == len(topology.racks.racks) - 64
    assert topology.fabrics["compute"].count("core") == million_gpu_cores() == 8064


def million_gpu_cores() -> int:
    """The 1M-GPU site's core switches from the fabric arithmetic alone (no figure of the sizer's result).

    SN6600-LD: 64 OSFP cages, 4 ports a cage at 400G = 256 ports (catalog, sonic platform.json 4x400G). A GB300
    NVL72 tray has 4 ConnectX-8, each 2 x 400G, one per plane: per plane 4 rails. An SU of 7 racks x 18 trays
    = 126 trays, so one leaf per rail and plane has 126 downlinks and, non-blocking, 126 uplinks (252 <= 256).
    A pod of 16,128 GPUs = 4,032 trays = 32 SUs: 32 x 4 = 128 leaves per plane.
    Spines per pod: the smallest divisor of a leaf's 126 uplinks whose spines hold 128 leaves x 126 links,
    each spine taking at most 256 / 2 = 128 downlinks (half its ports, 1:1): 128 x 126 / 128 = 126 -> 126
    spines, each with 128 x 126 / 126 = 128 downlinks and 128 uplinks.
    Pods: 254,016 trays / 4,032 = 63. Cores per group (spine j of every pod joins core group j): the smallest
    divisor of a spine's 128 uplinks with 63 pods x 128 / 256 = 31.5 cores or more -> 32 (each core takes
    63 x 128 / 32 = 252 <= 256 ports). Cores = 126 groups x 32 x 2 planes.
    """
    ports = 64 * 4
    trays_per_su = 7 * 18
    leaf_up = trays_per_su                                  # 1:1
    assert 2 * leaf_up <= ports
    leaves_per_pod = 16128 // 4 // trays_per_su * 4         # SUs a pod x rails
    spine_down_max = ports // 2
    spines = next(d for d in range(1, leaf_up + 1)
                  if leaf_up % d == 0 and d >= leaves_per_pod * leaf_up / spine_down_max)
    spine_up = leaves_per_pod * leaf_up // spines           # = its downlinks, 1:1
    pods = 254016 // (16128 // 4)
    per_group = next(d for d in range(1, spine_up + 1) if spine_up % d == 0 and d >= pods * spine_up / ports)
    assert (spines, spine_up, pods, per_group) == (126, 128, 63, 32)
    assert pods * spine_up // per_group <= ports
    return spines * per_group * 2


def test_a_reach_the_floor_cannot_meet_names_the_placement_setting(tmp_path: Path) -> None:
    # halls of one row of 4 racks, 3 km apart: a leaf-spine run between halls is 3 km and more, beyond
    # every catalog medium (FR4: 2 km)
    text = (DESIGNS / "roce-h100-2tier.yaml").read_text().replace(
        "layout: {racks_per_row: 12}", "layout: {racks_per_row: 4, rows_per_hall: 1, hall_spacing_m: 3000}")
    (tmp_path / "far.yaml").write_text(text)
    found = [f for f in analyze(tmp_path / "far.yaml", "far.yaml", RunConfig()).findings if f.rule == "NET005"]
    assert found and all("no catalog media reaches" in f.message for f in found)
    assert all("between halls" in f.hint and "site.layout.rows_per_hall" in f.hint for f in found)


def test_an_out_of_band_tree_too_small_keeps_its_leaves_named_one_by_one() -> None:
    # 4,000 DGX H100 in 1,000 racks: 168 out-of-band leaves cannot reach one declared SN4600C spine (64
    # ports): NET001, and the leaves the floor placed are still counted and named one by one (they were
    # all `oob-leaf0001`, counted once)
    oob = {**OOB, "tiers": {"leaf": {"switch": "sn2201"}, "spine": {"switch": "sn4600c", "count": 1}}}
    fabric = {"type": "infiniband", "speed_gbps": 400, "topology": "rail-optimized",
              "tiers": {"leaf": {"switch": "qm9700"}, "spine": {"switch": "qm9700"}}}
    topology = topology_with(training({"server": "dgx-h100", "count": 4000, "servers_per_rack": 4}, fabric,
                                      fabrics={"oob": oob}), {})
    fab = topology.fabrics["oob"]
    placed = len(topology.racks.switches[("oob", "leaf")])
    assert not fab.buildable and placed > 64
    assert fab.count("leaf") == placed == len(set(fab.names("leaf")))


def test_the_million_gpu_site_cages_take_200g_pam4_modules_on_a_cut_of_two_pods(tmp_path: Path) -> None:
    # The site's first 2 pods (8,064 trays, 448 racks: one hall) validated end to end, every link given media
    # and reach-checked (the full site takes minutes of CPU to validate; the floor tests above cover its
    # layout). An SN6600-LD cage at 400G holds 4 ports of 2 x 200G-PAM4 lanes (sonic platform.json 4x400G),
    # a ConnectX-8 cage its two 400G planes: the 1.6T twin-port module split 4 ways at the switches and the
    # 800G single-port module split 2 ways at the NICs (no NET011 any more), both within their 50 m.
    text = (FIXTURES / "scale" / "site-1m-gpus.yaml").read_text().replace("count: 254016", "count: 8064") \
        .replace("dp: 31752", "dp: 1008").replace("global_batch: 63504", "global_batch: 2016")
    (tmp_path / "cut.yaml").write_text(text)
    analysis = analyze(tmp_path / "cut.yaml", "cut.yaml", RunConfig())
    assert not {"NET005", "NET011"} & {f.rule for f in analysis.findings}
    tally = analysis.derived.cabling.tally
    assert not tally.problems
    nodes = sum(n for (fab, part, _r, _k), n in tally.node_xcvr.items() if fab == "compute" and
                part == "mms4a20-xm-2x400g")
    switches = {role: sum(c.values()) for (fab, part, role), c in tally.switch_xcvr.items()
                if fab == "compute" and part == "mms4a00-xm-flt-4x400g"}
    assert nodes == 8064 * 4                            # one module per ConnectX-8 cage, both planes in it
    # per plane 2 pods x 128 leaves, each 126 ports down in ceil(126 / 4) = 32 cages and 126 up in 32 more;
    # 2 x 126 spines, 128 down and 128 up = 64 cages; cores: 128 spine uplinks over the smallest divisor of
    # 128 at or above 2 pods x 128 / 256 ports = 1 core a group, 126 groups, each core 2 x 128 down = 64 cages
    assert switches == {"leaf": 2 * 2 * 128 * 64, "spine": 2 * 2 * 126 * 64, "core": 2 * 126 * 64}
    assert max(length for (fab, _p, length) in tally.cables if fab == "compute") <= 50


def test_the_million_gpu_site_spine_core_runs_are_beyond_every_400g_part() -> None:
    # What the full site cannot meet, said rather than hidden: its cores stand in the middle of 14 halls
    # (hall 7 of 14), so a spine in the first or last hall is hundreds of metres from its cores. At 400G a
    # spine's uplink cage carries 4 links to 4 different cores: a 1.6T module on splitter fibers, 50 m at
    # most (NVIDIA's MPO single-mode splitter budget); no flat-top part of the catalog at 400G reaches further
    # from a 4-lane cage, so NET005 reports these runs (with the `site.layout` settings that shorten them).
    topology = million_gpu_topology()
    layout = Layout(topology)
    spines = sorted({rack for rack, _ru in topology.racks.switches[("compute", "spine")]})
    cores = sorted({rack for rack, _ru in topology.racks.switches[("compute", "core")]})
    assert {layout.spot(c).hall for c in cores} == {6} and layout.halls == 14
    # hall 0 to hall 6: six hall spacings of 60 m (validator/data/layout.yaml) alone are 360 m
    longest = max(layout.distance_m(s, c) for s in spines for c in (cores[0], cores[-1]))
    assert longest > 6 * 60
    flat4 = ("OSFP224", "flat")                      # an SN6600-LD cage: 200G lanes, flat top
    media = MediaChooser(topology.resolved.catalog).choose(400, longest, False, False, 4, flat4, flat4, None, 4)
    assert media.kind == "unresolved"
    within = MediaChooser(topology.resolved.catalog).choose(400, 50, False, False, 4, flat4, flat4, None, 4)
    assert within.a_transceiver is not None and within.a_transceiver.id == "mms4a00-xm-flt-4x400g"


def test_the_two_modules_of_a_link_share_their_lane_rate() -> None:
    # A ConnectX-8 cage (OSFP224: 200G lanes, 2 x 400G planes, flat) to an SN5600 twin-port cage (2 x 400G of
    # 4 x 100G-PAM4, finned): the 200G-PAM4 split module (50 m, the shortest reach) would be first at the NIC,
    # but it cannot talk to a 100G-PAM4 switch module ("200G-PAM4-based transceivers cannot downshift",
    # LinkX 800G/200G-PAM4 list): the NIC gets the 100G-PAM4 twin-port flat module (an OSFP224 cage takes
    # OSFP modules), as in the twin-planar DGX B300 example. And a ConnectX-7 cage (OSFP, 100G lanes) takes
    # no 200G-PAM4 part.
    chooser = MediaChooser(builtin_catalog())
    media = chooser.choose(400, 30, False, True, 2, ("OSFP224", "flat"), ("OSFP", "finned"), None, 2)
    assert media.a_transceiver is not None and media.z_transceiver is not None
    assert media.a_transceiver.lane_gbps == media.z_transceiver.lane_gbps == 100
    assert media.a_transceiver.id != "mms4a20-xm-2x400g"
    cx7 = chooser.choose(400, 30, False, True, 2, ("OSFP", "flat"), ("OSFP224", "flat"), None, 4)
    assert cx7.kind == "unresolved" and "100G lanes" in cx7.unfit


def test_three_tier_oob_zones_of_unequal_size_keep_every_port_in_its_switch_layout(tmp_path) -> None:
    """Six pods of 224 GB300 racks with three-tier management zones of 224 racks (benchmarks/generate.py's
    site at 96,768 GPUs, with the 1M site's OOB core): the zone of the central network racks links to more
    core ports than the GPU zones, and the combined OOB fabric once took the largest zone's core layout, so
    the cage plan looked up a port that layout did not have (an internal error, found by the benchmark).
    Every OOB link end must name a port of its tier's layout, and validate must report, not crash."""
    from benchmarks.generate import SITE
    from tests.helpers import cli
    from validator.derive.links import link_tuples
    from validator.pipeline import load_topology

    racks = 6 * 224
    servers, dp = racks * 18, racks * 18 * 4 // 32
    path = tmp_path / "site-6-pods.yaml"
    path.write_text(SITE.format(gpus=racks * 72, servers=servers, dp=dp, batch=2 * dp,
                                pod="\n    pod: {gpus: 16128}", core="\n      core: {switch: sn6600-ld}",
                                oob_core="\n      core: {switch: sn4600c}"))
    topology = load_topology(path, path.name)
    oob = topology.fabrics["oob"]
    slots = {t.role: len(t.layout.slots) for t in oob.tiers}
    assert set(slots) == {"leaf", "spine", "core"}
    for a_role, _, a_port, z_role, _, z_port, _ in link_tuples(topology, "oob"):
        for role, port in ((a_role, a_port), (z_role, z_port)):
            if role in slots and isinstance(port, int):
                assert 1 <= port <= slots[role], (role, port, slots[role])
    code, out, err = cli("validate", str(path))
    assert code == 1 and "internal error" not in out + err
