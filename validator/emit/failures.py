"""`clusterplan failures`: the failure-domain analysis as JSON (schemas/failures.schema.json) and as text."""

from __future__ import annotations

from typing import Any

from validator.base.errors import format_path
from validator.derive.failures import FAILURES_VERSION, ClassResult, FailureAnalysis

BUNDLE = {"endpoint-leaf": "server/appliance-leaf", "leaf-spine": "leaf-spine", "spine-core": "spine-core"}


def _share(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def class_json(r: ClassResult) -> dict[str, Any]:
    t, i = r.training, r.inference
    return {
        "class": r.name, "kind": r.kind, "fabric": r.fabric, "count": r.count, "worst_member": r.member,
        "members_evaluated": r.sampled, "design_path": format_path(r.path),
        "gpus_unreachable": r.gpus_unreachable, "gpus_down": r.gpus_down, "gpus_cut_off": r.gpus_cut_off,
        "gpus_without_nic": r.gpus_without_nic, "gpus_at_risk": r.gpus_at_risk,
        "bandwidth": [{"fabric": b.fabric, "tier": b.bundle, "links_lost": b.links_lost, "links": b.links,
                       "gbps_lost": b.gbps_lost, "gbps": b.gbps,
                       "share_lost": _share(b.links_lost / b.links if b.links else None)} for b in r.bandwidth],
        "servers_cut_off": r.servers_cut_off, "servers_degraded": r.servers_degraded,
        "endpoints_cut_off": r.endpoints_cut_off, "bandwidth_left_share": _share(r.path_share),
        "storage_nodes_down": r.storage_nodes_down,
        "training": None if t is None else {"status": t.status, "job_gpus": t.job_gpus, "gpus_lost": t.gpus_lost,
                                            "dp": t.dp, "dp_after": t.dp_after,
                                            "bandwidth_left_share": _share(t.path_share),
                                            "storage_bandwidth_left_share": _share(t.storage_share)},
        "inference": None if i is None else {"replicas_lost": i.replicas_lost, "meets_target": i.meets_target,
                                             "pools": [{"pool": p.pool, "planned": p.planned, "lost": p.lost,
                                                        "needed": p.needed} for p in i.pools], "note": i.note},
        "spares": {"count": r.spares.count, "basis": r.spares.basis},
        "note": r.note,
    }


def failures_json(fa: FailureAnalysis) -> dict[str, Any]:
    return {
        "version": FAILURES_VERSION, "name": fa.name, "file": fa.file, "kind": fa.kind, "gpus": fa.gpus,
        "servers": fa.servers, "workload_fabric": fa.workload_fabric,
        "classes": [class_json(r) for r in fa.classes],
        "single_points_of_failure": [{"severity": s.severity, "component": s.component, "member": s.member,
                                      "message": s.message, "path": s.path, "line": s.line, "col": s.col,
                                      "fix": s.fix} for s in fa.findings],
    }


def _pct(x: float) -> str:
    return f"{x * 100:.3g}%"


def workload_text(r: ClassResult) -> str:
    if r.training is not None:
        t = r.training
        if t.status == "blocked":
            return (f"training job blocked: {t.gpus_lost:,} of its GPUs lost, no spare servers; "
                    f"DP {t.dp} -> {t.dp_after}")
        if t.status == "interrupted":
            return f"training job interrupted: {t.gpus_lost:,} GPUs lost, restarts on spare servers"
        if t.status == "degraded":
            parts = [f"slowest compute path keeps {_pct(t.path_share)}"] if t.path_share < 1 else []
            parts += [f"slowest storage path keeps {_pct(t.storage_share)}"] if t.storage_share < 1 else []
            if r.storage_nodes_down:
                parts.append(f"{r.storage_nodes_down} of {r.count} storage nodes down: checkpoint and read "
                             "bandwidth shrink with them")
            return "training job degraded: " + (", ".join(parts) or "links lost, no path of the job slower")
        return "training job unaffected"
    if r.inference is not None:
        i = r.inference
        pools = ", ".join(f"{p.pool} {p.lost}/{p.planned}" for p in i.pools)
        target = {True: "target still met", False: "target NOT met", None: "target not checked"}[i.meets_target]
        return f"replicas lost: {pools} ({target})"
    return "workload impact unknown"


def _gpus(r: ClassResult) -> str:
    if r.gpus_unreachable is None:
        return f"GPUs lost unknown, {r.gpus_at_risk:,} at risk" if r.gpus_at_risk is not None else "GPUs lost unknown"
    parts = [f"{r.gpus_unreachable:,} GPUs unreachable"]
    if r.gpus_without_nic:
        parts.append(f"{r.gpus_without_nic:,} without their own NIC")
    return ", ".join(parts)


def class_text(r: ClassResult) -> list[str]:
    sampled = f", worst of {r.sampled} sampled" if r.sampled < r.count and r.kind != "pdu" else ""
    lines = [f"  {r.name} ({r.count:,}{sampled}; worst: {r.member})", f"      {_gpus(r)}; {workload_text(r)}"]
    bw = [f"{b.fabric} {BUNDLE.get(b.bundle, b.bundle)} {b.links_lost:,}/{b.links:,} links "
          f"({_pct(b.links_lost / b.links)})" for b in r.bandwidth if b.links]
    if bw:
        lines.append("      lost: " + "; ".join(bw))
    cut = [f"{n:,} from {f}" for f, n in r.servers_cut_off.items()]
    cut += [f"{n:,} {role} from {f}" for f, roles in r.endpoints_cut_off.items() for role, n in roles.items()]
    if cut:
        lines.append("      cut off: " + "; ".join(cut))
    if r.note:
        lines.append(f"      note: {r.note}")
    spares = "spared by its parts" if r.spares.count is None else f"{r.spares.count}"
    lines.append(f"      spares: {spares} ({r.spares.basis})")
    return lines


def failures_text(fa: FailureAnalysis) -> str:
    lines = [f"{fa.name} ({fa.kind}, {fa.gpus:,} GPUs)  {fa.file}",
             f"  one failure of each class, the worst member; GPUs unreachable = down or cut off from the "
             f"{fa.workload_fabric or 'workload'} network"]
    for r in fa.classes:
        lines += class_text(r)
    if fa.findings:
        lines.append("single points of failure:")
        lines += [f"  {fa.file}:{s.line}: {s.severity}: {s.message}\n      fix: {s.fix}" for s in fa.findings]
    else:
        lines.append("no single point of failure found")
    return "\n".join(lines) + "\n"
