"""What a design resolves to, as plain data (`clusterplan describe`). Shape: schemas/describe.schema.json."""

from __future__ import annotations

from typing import Any

from validator.derive import Derived
from validator.expand.sizing import placement
from validator.expand.topology import Topology

DESCRIBE_VERSION = 1


def describe(topology: Topology, derived: Derived | None = None) -> dict[str, Any]:
    r = topology.resolved
    d = r.design
    derived = derived or Derived(topology)
    power = topology.it_power_w()
    fabrics: dict[str, Any] = {}
    for name, fab in topology.fabrics.items():
        plane = fab.plane
        summary = derived.summaries[name]
        fabrics[name] = {
            "type": fab.type,
            "topology": fab.topology,
            "speed_gbps": fab.speed_gbps,
            "planes": fab.planes,
            "rails": plane.rails,
            "scalable_units": plane.sus if fab.topology != "fat-tree" and plane.sus else None,
            "servers_per_scalable_unit": plane.su_servers if fab.topology != "fat-tree" and plane.sus else None,
            "leaves_per_rail": plane.leaves_per_rail,
            "pods": plane.pods if len(plane.tiers) == 3 else None,
            "tiers": [{"role": t.role, "switch": t.switch.id, "count": fab.count(t.role), "per_plane": t.count,
                       "ports_down": t.down_ports, "ports_up": t.up_ports, "speed_down_gbps": t.down_speed_gbps,
                       "speed_up_gbps": t.up_speed_gbps, "oversubscription": _ratio(t.ratio),
                       "links_down": sum(b.count for b in summary.bundles if b.z == t.role),
                       "links_up": sum(b.count for b in summary.bundles if b.a == t.role),
                       "placement": placement(r.fabrics[name], t.role, d.compute.servers_per_rack, len(fab.tiers))}
                      for t in fab.tiers],
            "links": summary.links,
            "link_groups": [{"from": b.a, "to": b.z, "count": b.count, "speed_gbps": b.speed_gbps}
                            for b in summary.bundles],
        }
    layout = derived.layout
    gpu_racks = topology.gpu_racks
    return {
        "version": DESCRIBE_VERSION,
        "name": d.metadata.name,
        "file": r.file,
        "kind": d.kind,
        "gpu": r.gpu.id,
        "gpus": topology.gpus,
        "server": r.server.id,
        "servers": topology.servers,
        "servers_per_rack": d.compute.servers_per_rack,
        "racks": {"gpu": gpu_racks, "network": layout.rack_count - gpu_racks, "total": layout.rack_count,
                  "halls": layout.halls},
        "nvlink_domains": {"gpus_per_domain": topology.nvlink_domain_gpus, "count": topology.nvlink_domains,
                           "racks_per_domain": r.nvlink_domain_racks},
        "fabrics": fabrics,
        "switches": topology.switch_count,
        "it_power_kw": {k: (None if v is None else round(v / 1000, 3)) for k, v in power.items()},
    }


def _ratio(r: float) -> str | None:
    return f"{r:.3g}:1" if r else None


def describe_text(facts: dict[str, Any]) -> str:
    lines = [
        f"{facts['name']} ({facts['kind']})  {facts['file']}",
        f"  GPUs            {facts['gpus']:,} x {facts['gpu']} in {facts['servers']:,} x {facts['server']}",
        f"  NVLink domains  {facts['nvlink_domains']['count']:,} x {facts['nvlink_domains']['gpus_per_domain']} GPUs",
        f"  racks           {facts['racks']['gpu']:,} GPU ({facts['servers_per_rack']} servers each) + "
        f"{facts['racks']['network']:,} network",
    ]
    for name, fab in facts["fabrics"].items():
        su = f", {fab['scalable_units']} SU x {fab['rails']} rails" if fab["scalable_units"] else ""
        if fab["topology"] == "rail-only":
            su = f", {fab['planes']} rails, each its own network"
        elif fab["planes"] > 1:
            su += f", {fab['planes']} planes"
        lines.append(f"  fabric {name:<8} {fab['type']} {fab['speed_gbps']:g}G {fab['topology']}{su}, "
                     f"{fab['links']:,} links")
        for t in fab["tiers"]:
            up = f" / {t['ports_up']} x {t['speed_up_gbps']:g}G up" if t["ports_up"] else ""
            lines.append(f"    {t['role']:<6} {t['count']:>6,} x {t['switch']:<20} "
                         f"{t['ports_down']} x {t['speed_down_gbps']:g}G down{up}, {t['placement']}")
    p = facts["it_power_kw"]
    total = "unknown (a catalog power figure is missing)" if p["total"] is None else f"{p['total']:,.1f} kW"
    lines.append(f"  IT power        {total} (servers and switches; optics in `clusterplan bom`)")
    return "\n".join(lines) + "\n"
