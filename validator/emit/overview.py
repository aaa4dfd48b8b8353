"""`clusterplan topology --view overview`: the design as a picture a person can read at any size.

Devices are drawn as groups and links as bundles with their counts. Servers are grouped by compute group
of the rack plan (the scalable unit of a rail-optimized compute fabric, else a row of GPU racks); a fabric's
leaves by the group of the servers they serve and, in a rail-optimized fabric, by rail; spines by pod; the
planes of a multi-plane fabric are identical by construction and drawn once. Consecutive groups of the same
shape (same servers, same leaves per rail, same links) are collapsed into one node marked with how many
it stands for (its servers counted per group, "each"; switch nodes and bundles count every device and
link of the groups they stand for), so a 100k-GPU design stays a few dozen nodes. Counts come from one
pass over the link pairs (`validator.derive.pairs.link_pairs`), the same pass the BOM and `describe` use.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from validator.derive.pairs import link_pairs
from validator.emit.topology_dot import TOPOLOGY_VERSION, dot_label, dot_string
from validator.expand.topology import Topology

SWITCH_ROLES = ("leaf", "spine", "core")
ROLE_LABEL = {"leaf": "leaves", "spine": "spines", "core": "cores"}


@dataclass
class Overview:
    name: str
    unit: str                                                   # "SU" or "group"
    runs: list[tuple[int, int, int]]                            # (first unit, last unit, servers per unit)
    nodes: dict[str, tuple[str, str, str]] = field(default_factory=dict)    # key -> (cluster, label, shape)
    edges: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # (a, b) -> [links, speed]


class _Builder:
    def __init__(self, topology: Topology) -> None:
        self.t = topology
        plan = topology.racks
        self.unit_of_rack = [plan.racks[i].group or 0 for i in plan.gpu_rack_at]
        self.spr = plan.servers_per_rack
        compute = topology.fabrics.get("compute")
        self.unit_word = "SU" if compute is not None and compute.topology == "rail-optimized" else "group"
        units = max(self.unit_of_rack, default=0) + 1
        self.servers_in = [0] * units
        for s in range(topology.servers):
            self.servers_in[self.unit(s)] += 1
        self.shape: list[list[object]] = [[n] for n in self.servers_in]
        self.pairs: dict[str, list[tuple[str, int, str, int, int, float]]] = {}
        self.leaf_unit: dict[str, dict[int, int]] = defaultdict(dict)
        self.main = next((f for f in ("compute", "inband") if f in topology.fabrics), None)

    def unit(self, server: int) -> int:
        return self.unit_of_rack[server // self.spr]

    def scan(self) -> None:
        """One pass over each fabric's link pairs: the shape of every unit, the unit of every leaf."""
        for f in self.t.fabrics:
            pairs = list(link_pairs(self.t, f))
            self.pairs[f] = pairs
            per_unit: dict[int, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))
            for a_role, a_idx, z_role, z_idx, _n, _s in pairs:
                if a_role == "server" and z_role == "leaf":
                    u = self.unit(a_idx)
                    self.leaf_unit[f].setdefault(z_idx, u)
            for a_role, a_idx, _z, z_idx, n, _s in pairs:
                if a_role == "server":
                    u = self.unit(a_idx)
                    per_unit[u][(self._rail(f, z_idx), 0)] += n
                elif a_role == "leaf" and a_idx in self.leaf_unit[f]:
                    per_unit[self.leaf_unit[f][a_idx]][(self._rail(f, a_idx), 1)] += n
            if f == self.main:      # units are told apart by the workload fabric's shape only
                for u, shape in per_unit.items():
                    self.shape[u].append((f, tuple(sorted(shape.items()))))

    def runs(self) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
        runs: list[tuple[int, int, int]] = []
        run_of: dict[int, int] = {}
        for u, shape in enumerate(self.shape):
            if runs and self.shape[runs[-1][0]] == shape:
                runs[-1] = (runs[-1][0], u, runs[-1][2])
            else:
                runs.append((u, u, self.servers_in[u]))
            run_of[u] = len(runs) - 1
        return runs, run_of

    def _rail(self, fabric: str, leaf: int) -> int:
        """Rail (or attachment side) of a leaf within its plane; -1 for a leaf of appliances only."""
        plane = self.t.fabrics[fabric].plane
        local = leaf % max(1, plane.leaves)
        if local >= plane.server_leaves:
            return -1
        return (local % max(1, plane.rails * plane.leaves_per_rail)) // max(1, plane.leaves_per_rail)


def build_overview(topology: Topology, fabrics: list[str] | None = None) -> Overview:
    b = _Builder(topology)
    b.scan()
    if fabrics is not None:
        b.pairs = {f: p for f, p in b.pairs.items() if f in fabrics}
    runs, run_of = b.runs()
    ov = Overview(topology.resolved.design.metadata.name, b.unit_word, runs)
    for k, (first, last, servers) in enumerate(runs):
        many = last - first + 1
        span = f"{b.unit_word} {first + 1}" if many == 1 else f"{b.unit_word} {first + 1}-{last + 1} (x{many})"
        gpus = servers * topology.resolved.server.gpus
        each = " each" if many > 1 else ""
        ov.nodes[f"servers/{k}"] = ("servers", f"{span}\n{servers} x {topology.resolved.server.id}{each}\n"
                                    f"{gpus:,} GPUs{each}", "box3d")
    for f, pairs in b.pairs.items():
        _fabric(ov, b, f, pairs, run_of)
    return ov


def _fabric(ov: Overview, b: _Builder, f: str, pairs: list[tuple[str, int, str, int, int, float]],
            run_of: dict[int, int]) -> None:
    fab = b.t.fabrics[f]
    plane = fab.plane
    per_plane = {t.role: t.count for t in fab.tiers}
    rail_word = {"rail-optimized": "rail", "rail-only": ""}.get(fab.topology, "side")
    members: dict[str, set[int]] = defaultdict(set)
    pod_run = _pod_runs(fab.plane.pods, fab.plane.leaves_per_pod, fab.plane.leaves)

    def key(role: str, index: int) -> str:
        if role == "server":
            return f"servers/{run_of[b.unit(index)]}"
        if role not in SWITCH_ROLES:
            k, local = f"{f}/{role}", index
        else:
            local = index % per_plane[role]
            if role == "leaf" and f != "oob" and index in b.leaf_unit[f]:
                k = f"{f}/leaf/{run_of[b.leaf_unit[f][index]]}/{b._rail(f, index)}"
            elif role == "spine" and f != "oob" and len(fab.tiers) == 3:
                k = f"{f}/spine/{pod_run[min(local // max(1, plane.spines_per_pod), plane.pods - 1)]}"
            else:
                k = f"{f}/{role}/all"
        members[k].add(local)
        return k

    for a_role, a_idx, z_role, z_idx, n, speed in pairs:
        a = key(a_role.split("/")[0] + "-mgmt" if "/" in a_role else a_role, a_idx)
        z = key(z_role, z_idx)
        edge = ov.edges.setdefault((a, z), [0, speed])
        edge[0] += n / fab.planes if f != "oob" else n
    planes = f" (each of {fab.planes} planes)" if fab.planes > 1 and f != "oob" else ""
    if fab.topology == "rail-only":
        planes = f" (each of {fab.planes} rails, each its own network)"
    ports: dict[str, float] = defaultdict(float)     # management ports: counted as their edges count them
    for (a, _z), (links, _speed) in ov.edges.items():
        ports[a] += links
    for k, local in members.items():
        if k.endswith("-mgmt"):
            many = f"{ports[k]:,.0f} on {len(local):,} devices" if ports[k] != len(local) else f"{len(local):,}"
            ov.nodes[k] = (f, f"{k.split('/')[1][:-5]} management ports\n{many}", "box")
            continue
        ov.nodes[k] = (f, _label(b, f, k, len(local), rail_word) + planes, "box")


def _pod_runs(pods: int, per_pod: int, leaves: int) -> list[str]:
    """Pod -> "first-last" of its run of pods with as many leaves."""
    sizes = [min(per_pod, leaves - p * per_pod) for p in range(pods)]
    runs: list[tuple[int, int]] = []
    for p, n in enumerate(sizes):
        if runs and sizes[runs[-1][0]] == n:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    return [f"{a}-{b}" for a, b in runs for _ in range(a, b + 1)]


def _label(b: _Builder, f: str, key: str, count: int, rail_word: str) -> str:
    parts = key.split("/")
    role = parts[1]
    if role in SWITCH_ROLES:
        tier = b.t.fabrics[f].tier(role)
        model = tier.switch.id if tier else ""
        where = ""
        if role == "leaf" and len(parts) == 4:
            rail = int(parts[3])
            where = "appliance leaves" if rail < 0 else f"{rail_word} {rail + 1}" if rail_word else ""
        elif role == "spine" and parts[2] != "all":
            a, z = (int(x) + 1 for x in parts[2].split("-"))
            where = f"pod {a}" if a == z else f"pods {a}-{z} (x{z - a + 1})"
        head = f"{f} {ROLE_LABEL[role]}" + (f", {where}" if where else "")
        return f"{head}\n{count:,} x {model}"
    if role.endswith("-mgmt"):
        return f"{role[:-5]} management ports\n{count:,}"
    return f"{role}\n{count:,}"


def overview_dot(ov: Overview, direction: str = "BT") -> str:
    """The overview as DOT, laid out bottom-up (servers, leaves, spines, cores) or, for a page, left to right."""
    assert direction in ("BT", "LR")
    lines = [f"graph {dot_string(ov.name)} {{", f'  graph [rankdir={direction} fontname="Helvetica" fontsize=11 '
             'nodesep=0.25 ranksep=0.6 newrank=true]', '  node [fontname="Helvetica" fontsize=10 style=filled '
             'fillcolor="#eef3fb" color="#4a6fa5"]', '  edge [fontname="Helvetica" fontsize=9 color="#7a8aa0"]']
    clusters: dict[str, list[str]] = defaultdict(list)
    for k in sorted(ov.nodes):
        cluster, label, shape = ov.nodes[k]
        clusters[cluster].append(f"    {dot_string(k)} [label={dot_label(label)} shape={shape}]")
    for i, (cluster, body) in enumerate(sorted(clusters.items(), key=lambda kv: (kv[0] != "servers", kv[0]))):
        title = "GPU servers" if cluster == "servers" else f"{cluster} network"
        lines += [f"  subgraph cluster_{i} {{", f"    label={dot_string(title)}", *body, "  }"]
    for (a, z), (n, speed) in sorted(ov.edges.items()):
        count = f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"
        lines.append(f"  {dot_string(a)} -- {dot_string(z)} [label={dot_string(f'{count} x {speed:g}G')}]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def overview_json(ov: Overview) -> str:
    """The overview as JSON (schemas/topology.schema.json, view overview)."""
    data = {
        "version": TOPOLOGY_VERSION, "view": "overview", "name": ov.name, "unit": ov.unit,
        "units": [{"first": a + 1, "last": z + 1, "servers_each": n} for a, z, n in ov.runs],
        "nodes": [{"id": k, "group": g, "label": label} for k, (g, label, _shape) in sorted(ov.nodes.items())],
        "edges": [{"a": a, "z": z, "links": n, "speed_gbps": speed} for (a, z), (n, speed) in sorted(ov.edges.items())],
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
