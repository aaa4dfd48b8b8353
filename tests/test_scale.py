"""The 102,400-GPU benchmark design (benchmarks/generate.py: 12,800 DGX H100, a three-tier rail-optimized
RoCE fabric in pods of 4,096 GPUs, storage, in-band and out-of-band networks) with the default placement:
it validates with no reach or cage error on any run, management or data, and the longest run of each link
class (fabric and cable) is within the reach of its media."""

from __future__ import annotations

import pytest

from benchmarks.generate import write
from validator.pipeline import analyze


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    path = next(p for p in write(tmp_path_factory.mktemp("bench")) if p.name == "training-102400.yaml")
    return analyze(path, path.name)


def test_the_100k_design_validates_without_reach_or_cage_errors(analysis):
    assert analysis.topology is not None and analysis.topology.gpus == 102_400
    rules = {f.rule for f in analysis.findings if f.severity == "error"}
    assert rules == set(), [f.message for f in analysis.findings if f.severity == "error"]
    assert not analysis.derived.cabling.tally.problems          # no link left without media or out of reach


def test_the_longest_run_of_each_link_class_is_within_its_reach(analysis):
    tally = analysis.derived.cabling.tally
    catalog = analysis.topology.resolved.catalog
    longest: dict[tuple[str, str], float] = {}
    for (fabric, part, length), _links in tally.cables.items():
        longest[(fabric, part)] = max(longest.get((fabric, part), 0.0), length)
    modules: dict[str, set[str]] = {}
    for (fabric, part, _role, _rack) in tally.node_xcvr:
        modules.setdefault(fabric, set()).add(part)
    for (fabric, part, _role) in tally.switch_xcvr:
        modules.setdefault(fabric, set()).add(part)
    for (fabric, part), length in longest.items():
        cable = catalog.cable(part)
        assert cable.reach_m is not None and length <= cable.reach_m, (fabric, part, length)
        if cable.media is not None:        # a fiber: some module of its media on this fabric reaches as far
            reach = max(catalog.transceiver(m).reach_m or 0 for m in modules[fabric]
                        if catalog.transceiver(m).media == cable.media)
            assert length <= reach, (fabric, part, length, reach)
    # the management network's copper runs stay within 100 m of Cat 6 (TIA-568)
    assert longest[("oob", "cat6-rj45")] <= 100
