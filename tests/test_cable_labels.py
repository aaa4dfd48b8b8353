"""Port names where a technician uses them: the cable label sheet (`cabling --format labels`) and each
device's port map in its rack (`racks --format ports`), joined with the cabling plan (whose interface names
are the configurations', tests/test_port_names.py): every cable has one label with the plan's id and both
ends' device:interface, and every cabled port is listed once, under its device, in the rack the plan puts
that device in."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

import pytest

from tests.helpers import check_golden, cli

DESIGNS = ["designs/inference-h200-llama3-70b.yaml", "designs/roce-h100-2tier.yaml"]


def _plan(design: str, *extra: str) -> list[dict[str, str]]:
    code, out, _ = cli("cabling", design, *extra)
    assert code == 0
    return list(csv.DictReader(io.StringIO(out)))


@pytest.mark.parametrize("design", DESIGNS)
def test_every_cable_has_one_label_with_the_plans_names(design):
    plan = _plan(design)
    code, out, _ = cli("cabling", design, "--format", "labels")
    assert code == 0
    labels = list(csv.DictReader(io.StringIO(out)))
    assert len(labels) == len(plan) > 0
    by_id = {row["cable_id"]: row for row in labels}
    assert len(by_id) == len(labels), "a cable id on two labels"
    for row in plan:
        label = by_id[row["cable_id"]]
        assert label["a_end"] == f"{row['a_device']}:{row['a_interface']}"
        assert label["z_end"] == f"{row['z_device']}:{row['z_interface']}"
        assert (label["a_rack"], label["a_ru"], label["z_rack"], label["z_ru"]) == \
            (row["a_rack"], row["a_ru"], row["z_rack"], row["z_ru"])
        assert (label["fabric"], label["cable"], label["length_class_m"]) == \
            (row["fabric"], row["cable"], row["length_class_m"])


def test_labels_for_one_switch_are_the_plans_rows_for_it():
    design, switch = "designs/roce-h100-2tier.yaml", "compute-spine0001"
    plan = _plan(design, "--switch", switch)
    code, out, _ = cli("cabling", design, "--format", "labels", "--switch", switch)
    labels = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["cable_id"] for r in labels] == [r["cable_id"] for r in plan]
    # a 400G Tomahawk 5 spine: 64 cages x 2 ports of leaf uplinks and its management port
    assert len(labels) == 64 * 2 + 1
    assert all(switch in (r["a_end"].split(":")[0], r["z_end"].split(":")[0]) for r in labels)


_RACK = re.compile(r"^rack (\S+) ")
_DEVICE = re.compile(r"^  (U\d+(?:-\d+)?|inside)\s+(\S+)  \(.*, (\d+) cabled ports\)$")
_PORT = re.compile(r"^    (\S+)\s+(\S+)\s+-> (\S+)\s+(\S+) U(\d+)  cable (\S+)$")


def _port_map(text: str) -> tuple[dict[str, str], Counter[tuple[str, ...]], dict[str, int]]:
    """(device -> rack, Counter of (device, fabric, interface, far end, far rack, far RU, cable), device ->
    the count its heading states) from `racks --format ports`."""
    rack = device = ""
    where: dict[str, str] = {}
    lines: Counter[tuple[str, ...]] = Counter()
    stated: dict[str, int] = {}
    for line in text.splitlines():
        if m := _RACK.match(line):
            rack = m.group(1)
        elif m := _DEVICE.match(line):
            device = m.group(2)
            assert device not in where, f"{device} stands in two places"
            where[device], stated[device] = rack, int(m.group(3))
        elif m := _PORT.match(line):
            lines[(device, *m.groups())] += 1
    return where, lines, stated


@pytest.mark.parametrize("design", DESIGNS)
def test_each_devices_port_map_is_the_plan_seen_from_its_rack(design):
    plan = _plan(design)
    code, out, _ = cli("racks", design, "--format", "ports")
    assert code == 0
    where, lines, stated = _port_map(out)
    expected: Counter[tuple[str, ...]] = Counter()
    for row in plan:
        for near, far in (("a", "z"), ("z", "a")):
            expected[(row[f"{near}_device"], row["fabric"], row[f"{near}_interface"],
                      f"{row[f'{far}_device']}:{row[f'{far}_interface']}", row[f"{far}_rack"], row[f"{far}_ru"],
                      row["cable_id"])] += 1
            # the device is listed in the rack the plan says its end stands in
            assert where[row[f"{near}_device"]] == row[f"{near}_rack"], row
    assert lines == expected
    assert all(n == 1 for n in lines.values()), "a port listed twice"
    per_device = Counter(key[0] for key in lines)
    assert {d: n for d, n in stated.items() if n} == dict(per_device)


def test_port_map_golden():
    code, out, _ = cli("racks", "designs/inference-h200-llama3-70b.yaml", "--format", "ports")
    assert code == 0
    check_golden("racks/inference-h200-llama3-70b.ports", out)
