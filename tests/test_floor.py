"""The floor plan (issue 25): rows and halls as `site.layout` says, every management port once and
near its switch, network racks within their air limit. Expected figures are hand arithmetic."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import training
from tests.helpers import DESIGNS, FIXTURES
from validator.derive.links import iter_links
from validator.derive.media import MediaChooser
from validator.derive.placement import Layout, Spot
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


def million_gpu_blocks() -> tuple[list[int], list[int]]:
    """The floor blocks of the 1M-GPU site of tests/fixtures/scale/site-1m-gpus.yaml and the pod of each (the
    central racks: -1), by hand.

    14,112 GB300 NVL72 racks (18 trays of 4 GPUs: 1,016,064 GPUs) in compute groups of 7 racks (one SU:
    126 trays, one leaf per rail and plane at 400G, 126 of its 256 ports down): 2,016 groups. A group's
    network rack holds its 8 leaves (4 rails x 2 planes, SN6600-LD 2U) and its out-of-band leaf: blocks of
    7 + 1 = 8 racks (3 GPU racks, the network rack, 4 GPU racks).
    A pod (and out-of-band zone) of 224 racks is 32 groups; its 2 x 126 spines (2U, 22 in a 48U rack less
    4U reserved; see million_gpu_cores) stand with its middle group (index 15): 14 beside that group's 8
    leaves, 238 in 11 racks of their own; the zone's out-of-band spines and cores (1U and 2U) take one
    more rack there: blocks of 7 + 1 + 11 + 1 = 20 (3 GPU racks, 13 network racks, 4 GPU racks). The 8,064
    cores (one core layer joining 63 pods per plane, sized to the spines that exist: million_gpu_cores) take
    ceil(8,064 / 22) = 367 central racks, the central zone's out-of-band switches one more: 368.
    Where the central racks go (million_gpu_halls): at the front of the hall nearest the middle of the floor.
    Halls hold 5 pods, so pod 30 (group 960) starts hall 6; the middle of the floor is group 2,016 / 2 =
    1,008, 48 groups after it and 112 before pod 35, which starts hall 7: before group 960.
    """
    blocks: list[int] = []
    pods: list[int] = []
    for group in range(2016):
        if group == 960:
            blocks.append(368)
            pods.append(-1)
        blocks.append(20 if group % 32 == 15 else 8)
        pods.append(group // 32)
    return blocks, pods


def million_gpu_halls() -> int:
    """Halls of the 1M-GPU site by hand: rows of 32 racks, 45 rows a hall (1,440 racks), pods kept in one hall.

    A pod from the start of a row: groups 0-14 (15 blocks of 8) fill rows 0-2 and 24 racks of row 3; the middle
    block of 20 does not fit the 8 left and starts row 4 (positions 0-19), group 16 joins it (20-27), group 17
    starts row 5, and groups 17-31 (15 blocks) fill rows 5-7 and 24 racks of row 8: 8 rows + 24 = 280 racks.
    A pod from position 24: group 0 ends that row, groups 1-14 (14 blocks) fill 3 rows + 16, the block of 20
    starts the 5th row after, group 16 joins it, groups 17-31 fill 3 rows + 24 from the 6th: 9 rows (288).
    A hall: 280 + 4 x 288 = 1,432 <= 1,440 racks, a 6th pod would end at 1,720: 5 pods a hall.
    Hall 6: the 368 central racks first (11 rows + 16), then a pod from position 16 (groups 0-1 end that row,
    groups 2-14 fill 3 rows + 8, the block of 20 fits beside them (8-27), group 16 starts a row and groups
    16-31 fill it and 3 more: to slot 640, a row start), pods to 920 and 1,208, a 4th would end at 1,496 > 1,440.
    So halls 0-5 hold pods 0-29, hall 6 the centre and pods 30-32, halls 7-12 the other 30 pods: 13 halls.
    """
    assert 280 + 4 * 288 <= 45 * 32 < 280 + 5 * 288
    assert 368 + (640 - 368) + 280 + 288 + 288 > 45 * 32 >= 640 + 280 + 288
    return 6 + 1 + (63 - 30 - 3) // 5


def test_a_million_gpu_site_lays_out_in_thirteen_halls_a_pod_in_one_hall() -> None:
    blocks, pods = million_gpu_blocks()
    assert sum(blocks) == 14112 + 2016 + 63 * 12 + 368
    spots = floor_spots(blocks, 32, 45, pods)
    assert spots[-1][0] + 1 == million_gpu_halls() == 13
    assert len(set(spots)) == len(spots)                 # no spot used twice
    first = 0
    halls: dict[int, set[int]] = {}
    for size, pod in zip(blocks, pods, strict=True):
        halls.setdefault(pod, set()).update(spot[0] for spot in spots[first:first + size])
        first += size
    assert all(len(h) == 1 for h in halls.values())      # no pod (no leaf-spine run) straddles two halls
    central = sum(blocks[:960])
    assert spots[central] == (6, 0, 0)                    # the cores at the front of hall 6
    assert {pod for pod, h in halls.items() if h == {6}} == {-1, 30, 31, 32}


def test_floor_spots_keep_a_pod_in_one_hall() -> None:
    # halls of 2 rows of 10. Pod A, 3 blocks of 4: two in row 1, the third starts row 2 (positions 0-3). Pod B,
    # 2 blocks of 5, would take positions 4-8 of row 2 and then the next hall: it starts the next hall instead;
    # without pods it straddles the two
    spots = floor_spots([4, 4, 4, 5, 5], 10, 2, [0, 0, 0, 1, 1])
    assert spots[12] == (1, 0, 0) and spots[-1] == (1, 0, 9)
    plain = floor_spots([4, 4, 4, 5, 5], 10, 2)
    assert plain[12:17] == [(0, 1, 4), (0, 1, 5), (0, 1, 6), (0, 1, 7), (0, 1, 8)] and plain[17] == (1, 0, 0)
    # a pod larger than a hall runs on as before
    assert floor_spots([4, 30], 10, 2, [0, 1])[4] == (0, 0, 4)


@cache
def million_gpu_topology() -> Topology:
    """The 1M-GPU site's topology (read to expand: about 2 s; the full validate is minutes, see below)."""
    return load_topology(FIXTURES / "scale" / "site-1m-gpus.yaml")


def test_the_million_gpu_design_is_laid_out_so_with_its_out_of_band_zones() -> None:
    topology = million_gpu_topology()
    assert topology.gpus == 1016064 and topology.gpu_racks == 14112
    assert topology.racks.spots == floor_spots(million_gpu_blocks()[0], 32, 45, million_gpu_blocks()[1])
    oob = topology.fabrics["oob"]
    # 64 zones (63 pods and the centre), each a three-tier tree of its own; one out-of-band leaf in every
    # rack but the 64 racks of the zones' own spines and cores: 14,112 + 2,016 + 63 x 11 + 367
    assert oob.buildable and len(oob.zones) == 64
    assert oob.count("leaf") == 14112 + 2016 + 63 * 11 + 367 == len(topology.racks.racks) - 64
    assert topology.fabrics["compute"].count("core") == million_gpu_cores() == 8064


def million_gpu_cores() -> int:
    """The 1M-GPU site's core switches from the fabric arithmetic alone (no figure of the sizer's result).

    SN6600-LD: 64 OSFP224 cages, 4 ports a cage at 400G = 256 ports, 2 at 800G = 128 (catalog, sonic
    platform.json 4x400G and 2x800G). A GB300 NVL72 tray has 4 ConnectX-8, each 2 x 400G, one per plane: per
    plane 4 rails. An SU of 7 racks x 18 trays = 126 trays, so one leaf per rail and plane has 126 downlinks and,
    non-blocking, 126 uplinks (252 <= 256). A pod of 16,128 GPUs = 4,032 trays = 32 SUs: 32 x 4 = 128 leaves per
    plane. The spines run their uplinks at 800G (`tiers.spine.uplink_speed_gbps: 800`): d downlinks at 400G take
    d / 4 cages and carry d x 400 / 800 = d / 2 uplinks in d / 4 more cages: at most 128 downlinks.
    Spines per pod: the smallest divisor of a leaf's 126 uplinks whose spines hold 128 leaves x 126 links:
    128 x 126 / 128 = 126 -> 126 spines, each with 128 x 126 / 126 = 128 downlinks and 64 uplinks at 800G.
    Pods: 254,016 trays / 4,032 = 63. Cores per group (spine j of every pod joins core group j): the smallest
    divisor of a spine's 64 uplinks with 63 pods x 64 / 128 = 31.5 cores or more -> 32 (each core takes
    63 x 64 / 32 = 126 <= 128 ports at 800G). Cores = 126 groups x 32 x 2 planes.
    """
    ports_400, ports_800 = 64 * 4, 64 * 2
    trays_per_su = 7 * 18
    leaf_up = trays_per_su                                  # 1:1
    assert 2 * leaf_up <= ports_400
    leaves_per_pod = 16128 // 4 // trays_per_su * 4         # SUs a pod x rails
    spine_down_max = max(d for d in range(0, ports_400 + 1, 4) if d // 4 + d // 2 // 2 <= 64)
    spines = next(d for d in range(1, leaf_up + 1)
                  if leaf_up % d == 0 and d >= leaves_per_pod * leaf_up / spine_down_max)
    spine_up = leaves_per_pod * leaf_up // spines * 400 // 800   # its downlinks' bandwidth, 1:1, at 800G
    pods = 254016 // (16128 // 4)
    per_group = next(d for d in range(1, spine_up + 1) if spine_up % d == 0 and d >= pods * spine_up / ports_800)
    assert (spine_down_max, spines, spine_up, pods, per_group) == (128, 126, 64, 63, 32)
    assert pods * spine_up // per_group <= ports_800
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
    # and reach-checked (the full site takes minutes of CPU to validate; the tests below cover its layout and
    # reach). At 400G an SN6600-LD cage holds 4 ports of 2 x 200G-PAM4 lanes (sonic platform.json 4x400G), a
    # ConnectX-8 cage its two 400G planes: the 1.6T twin-port module split 4 ways at the switches and the 800G
    # single-port module split 2 ways at the NICs, both within their 50 m. The spines' uplinks run at 800G
    # (2 ports a cage): the twin-port 2 x 800G DR4 module unsplit, 500 m, at the spine and at the core. The fabric
    # is Spectrum-X (RoCE): the Ethernet parts, MMS4C11 at the switches and MMS4C10-XM800 (IB and Ethernet, a
    # prototype) at the NICs, never the InfiniBand-only MMS4A00/MMS4A20.
    text = (FIXTURES / "scale" / "site-1m-gpus.yaml").read_text().replace("count: 254016", "count: 8064") \
        .replace("dp: 31752", "dp: 1008").replace("global_batch: 63504", "global_batch: 2016")
    (tmp_path / "cut.yaml").write_text(text)
    analysis = analyze(tmp_path / "cut.yaml", "cut.yaml", RunConfig())
    assert not {"NET005", "NET011"} & {f.rule for f in analysis.findings}
    tally = analysis.derived.cabling.tally
    assert not tally.problems
    nodes = sum(n for (fab, part, _r, _k), n in tally.node_xcvr.items() if fab == "compute" and
                part == "mms4c10-xm800-2x400g")
    switches = {(part, role): sum(c.values()) for (fab, part, role), c in tally.switch_xcvr.items()
                if fab == "compute"}
    assert nodes == 8064 * 4                            # one module per ConnectX-8 cage, both planes in it
    # per plane 2 pods x 128 leaves, each 126 ports down in ceil(126 / 4) = 32 cages and 126 up in 32 more;
    # 2 x 126 spines, 128 down at 400G (32 cages) and 64 up at 800G (32 cages); cores: 64 spine uplinks over
    # the smallest divisor of 64 at or above 2 pods x 64 / 128 ports = 1 core a group, 126 groups, each core
    # 2 x 64 down at 800G = 64 cages
    split, straight = "mms4c11-xm-flt-4x400g", "mms4c11-xm-flt"
    assert switches == {(split, "leaf"): 2 * 2 * 128 * 64, (split, "spine"): 2 * 2 * 126 * 32,
                        (straight, "spine"): 2 * 2 * 126 * 32, (straight, "core"): 2 * 126 * 64}
    assert max(length for (fab, _p, length) in tally.cables if fab == "compute") <= 500


def test_the_million_gpu_site_switch_runs_are_within_reach() -> None:
    """Every link class of the full site within reach (this test and the next): its runs by hand, checked
    against the floor the tool laid out and the media it chooses.

    validator/data/layout.yaml: racks 0.6 m wide, rows 4.2 m apart, 2 x (1.5 m up + 0.5 m slack) = 4 m of ends,
    60 m between hall entrances along the corridor; the site puts its halls on both sides (`hall_sides: 2`:
    halls 2k and 2k + 1 face each other, one more 60 m across). Halls as million_gpu_halls.
    - Spine -> core: the cores fill hall 6 from its entrance: 367 racks, rows 0-10 and 15 racks of row 11; the
      farthest from the entrance is row 10, position 31: 42 + 18.6 = 60.6 m. A pod's spines stand in its block
      of 20 (3 GPU racks, then the leaves' network rack and 11 racks of spines: positions 3-14), which starts
      row 4 of a pod from a row start and the 5th row after a pod from position 24: rows 4, 13, 22, 31 and 40 of
      a hall of 5 pods; the farthest is row 40, position 14: 168 + 8.4 = 176.4 m. Hall 6 is pair 3, side 0;
      hall 1 (pair 0, side 1) is the farthest: 3 pairs + 1 across = 240 m. 176.4 + 240 + 60.6 + 4 = 481 m:
      within the 500 m of the twin-port 2 x 800G DR4 module (the Ethernet MMS4C11 RHS; no flat-top 2 x FR4 is
      listed).
    - Leaf -> spine: a pod from position 24 spans 10 rows, its block of 20 in the 6th: the leaf of group 0 (row
      0, position 24 + 3) is 5 rows and 24 positions from the first spine rack (position 3): 21 + 14.4 + 4 =
      39.4 m, within the 50 m of the split 1.6T module.
    - Server -> leaf: the block of 20 puts its last GPU rack 16 positions after its leaf rack: 9.6 + 4 = 13.6 m.
    - Out of band: a zone is a pod's 224 racks with their network racks, in one hall, at most 9 rows and 31
      positions apart: 37.8 + 18.6 + 4 = 60.4 m; the central zone 11 rows: 46.2 + 18.6 + 4 = 68.8 m: within
      Cat6's 100 m and the 100 m of the 100G SR4 uplinks.
    """
    topology = million_gpu_topology()
    layout = Layout(topology)
    assert layout.halls == million_gpu_halls() == 13 and layout.sides == 2
    plan = topology.racks
    spine_racks = sorted({rack for rack, _ru in plan.switches[("compute", "spine")]})
    core_racks = sorted({rack for rack, _ru in plan.switches[("compute", "core")]})
    assert len(core_racks) == 367 and {layout.spot(c).hall for c in core_racks} == {6}
    # the first core rack stands at the entrance of hall 6: the core farthest from it is farthest from any hall
    assert layout.spot(core_racks[0]) == Spot(6, 0, 0)
    far = max(core_racks, key=lambda c: layout.distance_m(core_racks[0], c))
    longest = max(layout.distance_m(s, c) for s in spine_racks
                  for c in (core_racks if layout.spot(s).hall == 6 else [far]))
    assert longest == pytest.approx(176.4 + (3 + 1) * 60 + 60.6 + 4) == pytest.approx(481)
    chooser = MediaChooser(topology.resolved.catalog)
    flat = ("OSFP224", "flat")                       # an SN6600-LD cage: 200G lanes, flat top
    spine_core = chooser.choose(800, longest, False, False, 2, flat, flat, None, 2, protocol="ethernet")
    assert spine_core.a_transceiver is not None and spine_core.a_transceiver.id == "mms4c11-xm-flt"
    assert spine_core.reach_m == 500 >= longest
    fab = topology.fabrics["compute"]
    leaf, spine = fab.tier("leaf"), fab.tier("spine")
    assert leaf is not None and spine is not None
    per_pod = (fab.plane.leaves_per_pod, fab.plane.spines_per_pod)
    pods: dict[int, tuple[set[int], set[int]]] = {}
    for role, tier, size in (("leaf", leaf, per_pod[0]), ("spine", spine, per_pod[1])):
        for i, (rack, _ru) in enumerate(plan.switches[("compute", role)]):
            pods.setdefault((i % tier.count) // size, (set(), set()))[role == "spine"].add(rack)
    leaf_spine = max(layout.distance_m(a, b) for leaves, spines in pods.values() for a in leaves for b in spines)
    assert len(pods) == 63 and leaf_spine == pytest.approx(5 * 4.2 + 24 * 0.6 + 4)
    split = chooser.choose(400, leaf_spine, False, False, 4, flat, flat, None, 4)
    assert split.a_transceiver is not None and split.reach_m == 50 >= leaf_spine


def test_the_million_gpu_site_server_and_out_of_band_runs_are_within_reach() -> None:
    # the server-leaf and out-of-band arithmetic of the test above
    topology = million_gpu_topology()
    layout = Layout(topology)
    plan = topology.racks
    chooser = MediaChooser(topology.resolved.catalog)
    groups: dict[int, list[int]] = {}
    for rack in plan.racks:
        if rack.group is not None:
            groups.setdefault(rack.group, []).append(rack.index)
    leaf_racks = {rack for rack, _ru in plan.switches[("compute", "leaf")]}
    server_leaf = max(layout.distance_m(g, n) for racks in groups.values() for g in racks
                      if plan.racks[g].kind == "gpu" for n in racks if n in leaf_racks)
    assert server_leaf == pytest.approx(16 * 0.6 + 4) and server_leaf <= 50
    zones = [{layout.spot(r) for g in range(32 * z, 32 * z + 32) for r in groups[g]} for z in range(63)]
    zones.append({layout.spot(r.index) for r in plan.racks if r.group is None})
    spans = [(len({s.hall for s in z}), max(s.row for s in z) - min(s.row for s in z)) for z in zones]
    assert all(h == 1 for h, _ in spans) and max(r for _, r in spans[:-1]) == 9 and spans[-1][1] == 11
    assert chooser.choose(100, 11 * 4.2 + 31 * 0.6 + 4, False, False, 1, ("QSFP28", None), ("QSFP28", None),
                          None).reach_m >= 100


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
                                oob_core="\n      core: {switch: sn4600c}", halls="rows_per_hall: 44", spine_up=""))
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
