"""Single points of failure: one part whose failure takes a whole network, every GPU or all the storage
away, with the design key to change and how (the derive stage). Reported by `clusterplan failures` and
the HTML report; they are not validation rules, so a design's `validate` verdict does not change."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from validator.base.errors import format_path
from validator.base.facts import fact
from validator.derive.failures.graph import FabricGraph
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.failures import ClassResult

NETWORK = {"compute": "compute (back-end) network", "storage": "storage network",
           "inband": "in-band (front-end) network", "oob": "out-of-band management network"}
FIX = {
    "leaf": "add leaves so each server reaches two (attachment: dual, or a second plane), or a spine tier",
    "spine": "use at least two spines (tiers.spine.count), so one failure leaves every leaf a path",
    "core": "use at least two cores per group (tiers.core.count), so one failure leaves every pod a path",
}


@fact
class Spof:
    severity: str            # warning (a workload network, the GPUs, the storage), info (management only)
    component: str           # the class
    member: str
    message: str
    path: str
    line: int
    col: int
    fix: str


def single_points(topology: Topology, graphs: dict[str, FabricGraph],
                  results: Sequence[ClassResult]) -> Iterator[Spof]:
    r = topology.resolved

    def spof(res: ClassResult, severity: str, message: str, fix: str) -> Spof:
        line, col = r.where(res.path)
        return Spof(severity, res.name, res.member, message, format_path(res.path), line, col, fix)

    for res in results:
        if res.kind in ("switch", "oob-switch") and res.fabric in graphs:
            g = graphs[res.fabric]
            servers = len(g.server_leaves)
            ports = sum(len(v) for v in g.leaf_endpoints.values())
            cut = res.servers_cut_off.get(res.fabric, 0)
            mgmt = sum(res.endpoints_cut_off.get(res.fabric, {}).values())
            if (servers > 1 and cut == servers) or (not servers and ports > 1 and mgmt == len(g.endpoint_leaves)):
                what = f"all {servers:,} servers" if servers else f"all {mgmt:,} endpoints"
                role = res.name.split()[-1]
                yield spof(res, "info" if res.fabric == "oob" else "warning",
                           f"one {res.name} switch ({res.member}) carries the whole {NETWORK[res.fabric]}: its "
                           f"failure cuts off {what}", FIX.get(role, ""))
        elif res.kind == "storage-node" and res.count == 1:
            yield spof(res, "warning", f"the only storage node ({res.member}): its failure stops every checkpoint "
                       "and data read", "add storage nodes (storage.nodes.count), striped so one can fail")
        elif res.kind == "cdu" and topology.gpu_racks > 1 and res.gpus_unreachable == topology.gpus:
            yield spof(res, "warning", f"one CDU ({res.member}) cools every GPU rack: its failure stops every GPU",
                       "set site.rack.racks_per_cdu so that more than one CDU cools the GPU racks")
        elif res.kind == "network-rack" and topology.gpu_racks > 1 and res.gpus_unreachable == topology.gpus:
            yield spof(res, "info", f"network rack {res.member} holds switches every GPU depends on: a rack-level "
                       "failure (both power feeds, its cooling) cuts off every GPU",
                       "spread the tier over network racks (the rack plan fills each one up to its rack units and "
                       "power budget; `placement: row` puts a tier in the rows' network racks)")
