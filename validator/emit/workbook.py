"""Everything the workbook's Summary sheet states, and the timestamp it carries."""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from validator import __version__
from validator.base.findings import Finding
from validator.check.result import Analysis
from validator.derive.bom import Bom
from validator.emit.scorecard import inference_headline
from validator.expand.topology import Topology
from validator.resolve.catalog import CATALOG_VERSION

FIXED_EPOCH = datetime(1980, 1, 1, tzinfo=UTC)   # the earliest date a zip entry can carry


def design_timestamp(path: Path, given: str | None = None) -> datetime:
    """--timestamp, else SOURCE_DATE_EPOCH, else the design's last git commit, else a fixed date (the
    zip entries need one; page headers then say "undated", never 1980-01-01)."""
    if given:
        stamp = datetime.fromisoformat(given)
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=UTC)
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct", "--", path.name], cwd=path.parent,
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout.strip().isdigit():
            return datetime.fromtimestamp(int(out.stdout.strip()), tz=UTC)
    except (OSError, subprocess.SubprocessError):
        pass
    return FIXED_EPOCH


def design_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def summary(topology: Topology, bom: Bom, estimate: dict[str, Any], findings: list[Finding], path: Path,
            timestamp: datetime) -> dict[str, Any]:
    r = topology.resolved
    if estimate.get("kind") == "training":
        headline = (f"MFU {100 * estimate['mfu']:.1f}%, {estimate['tokens_per_s']:,.0f} tokens/s, step "
                    f"{estimate['step_time_s']:.3g} s")
    else:
        headline = inference_headline(estimate)
    active = [f for f in findings if not f.waived]
    p = bom.power
    return {
        "design": r.design.metadata.name, "file": r.file, "kind": r.design.kind,
        "GPUs": f"{topology.gpus:,} x {r.gpu.id}", "servers": f"{topology.servers:,} x {r.server.id}",
        "racks": f"{p['gpu_racks']} GPU + {p['network_racks']} network",
        "IT power (kW)": _known(p["it_kw"]), "facility power (kW)": _known(p["facility_kw"]),
        "energy cost per year (USD)": _known(bom.tco["energy_usd_per_year"]),
        "TCO per year (USD)": _known(bom.tco["total_usd_per_year"]),
        "cost per busy GPU-hour (USD)": _known(bom.tco["gpu_hour_usd"]),
        "GPU-hour at capex low (USD)": _known(bom.tco["gpu_hour_usd_low"]),
        "GPU-hour at capex high (USD)": _known(bom.tco["gpu_hour_usd_high"]),
        "TCO assumptions": "; ".join(f"{k} {v['value']:g} ({v['from']})" for k, v in bom.tco["assumptions"].items()),
        "unpriced BOM lines": bom.totals["unpriced_lines"],
        "derived or proxy prices": ", ".join(bom.totals["weak_price_parts"]) or "none",
        "estimate": headline,
        "findings": f"{sum(f.severity == 'error' for f in active)} errors, "
                    f"{sum(f.severity == 'warning' for f in active)} warnings, "
                    f"{sum(f.severity == 'info' for f in active)} info, {len(findings) - len(active)} waived",
        "tool": f"clusterplan {__version__}", "catalog": CATALOG_VERSION,
        "design sha256": design_hash(path), "generated": timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _known(value: float | None) -> float | str:
    return "unknown" if value is None else value


def build_workbook(path: Path, analysis: Analysis, timestamp: str | None = None, kind: str = "bom") -> bytes:
    """The workbook of an analysed design: `bom` (BOM, power, findings) or `cabling` (the cabling
    plan); the findings are the analysis's, with the run's severities and waivers, as `validate`
    reports them."""
    from validator.emit.xlsx import workbook_bytes

    derived, topology = analysis.derived, analysis.topology
    assert derived is not None and topology is not None
    stamp = design_timestamp(path, timestamp)
    bom, findings = derived.bom, analysis.findings
    facts = summary(topology, bom, derived.estimate.as_dict(), findings, path, stamp)
    return workbook_bytes(bom, derived.cabling, findings, facts, stamp, kind)
