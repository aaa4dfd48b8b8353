"""Total cost of ownership: depreciation, support and energy per year, and the cost of a GPU-hour.

    energy per year    = IT kW x PUE x hours per year x utilization x price per kWh
    depreciation/year  = capex / depreciation years (straight line)
    support/year       = capex x support % / 100
    cost per GPU-hour  = (depreciation + support + energy) per year / (GPUs x hours per year x utilization)

The cost of a GPU-hour is of a busy hour: a cluster busy half the year pays its depreciation over half
the hours. Capex is the BOM's, every line; a BOM with unpriced lines or a part of unknown power gives
no TCO (None), never a silently smaller one. Inputs: the design (`site.pue`,
`site.electricity_usd_per_kwh`, `costs.amortization_years`, `costs.support_pct_per_year`,
`costs.utilization`), else `.clusterplan.yaml` `tco:`, else validator/data/defaults.yaml (with sources).
The inference estimate's cost per million tokens and the training cost per run read `gpu_hour_usd`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from validator.base.facts import fact
from validator.base.tables import hours_per_year
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom


@fact
class TcoInputs:
    capex_usd: float | None      # None: the BOM has unpriced lines
    it_kw: float | None          # None: a part's power is unknown
    gpus: int
    pue: float
    electricity_usd_per_kwh: float
    utilization: float
    depreciation_years: float
    support_pct_per_year: float
    hours_per_year: float = 8760.0


def tco(inp: TcoInputs) -> dict[str, Any]:
    """Yearly cost of ownership and the cost of a busy GPU-hour; a figure that needs an unknown is None."""
    busy_hours = inp.hours_per_year * inp.utilization
    energy_kwh = None if inp.it_kw is None else inp.it_kw * inp.pue * busy_hours
    energy = None if energy_kwh is None else energy_kwh * inp.electricity_usd_per_kwh
    depreciation = None if inp.capex_usd is None else inp.capex_usd / inp.depreciation_years
    support = None if inp.capex_usd is None else inp.capex_usd * inp.support_pct_per_year / 100
    parts = (depreciation, support, energy)
    total = None if any(p is None for p in parts) else sum(p for p in parts if p is not None)
    gpu_hour = None if total is None or not inp.gpus else total / (inp.gpus * busy_hours)
    return {"inputs": asdict(inp), "energy_mwh_per_year": None if energy_kwh is None else energy_kwh / 1000,
            "energy_usd_per_year": energy, "depreciation_usd_per_year": depreciation,
            "support_usd_per_year": support, "total_usd_per_year": total, "gpu_hour_usd": gpu_hour}


def _pick(*values: float | None) -> float:
    for v in values:
        if v is not None:
            return float(v)
    raise ValueError("no value and no default")   # defaults.yaml always has one


def tco_inputs(topology: Topology, capex_usd: float | None, it_kw: float | None) -> TcoInputs:
    r = topology.resolved
    costs, repo, defaults = r.design.costs, r.costing.tco, r.defaults
    return TcoInputs(
        capex_usd=capex_usd, it_kw=it_kw, gpus=topology.gpus, pue=r.pue,
        electricity_usd_per_kwh=r.electricity_usd_per_kwh,
        utilization=_pick(costs.utilization, repo.get("utilization"), defaults["utilization"]),
        depreciation_years=_pick(costs.amortization_years, repo.get("depreciation_years"),
                                 defaults["depreciation_years"]),
        support_pct_per_year=_pick(costs.support_pct_per_year, repo.get("support_pct_per_year"),
                                   defaults["support_pct_per_year"]),
        hours_per_year=hours_per_year())


def design_tco(topology: Topology, bom: Bom) -> dict[str, Any]:
    """The TCO of a design from its BOM: every line priced and every power figure known, else None."""
    capex = bom.totals["capex_usd"] if bom.totals["capex_complete"] else None
    return _rounded(tco(tco_inputs(topology, capex, bom.power["it_kw"])))


def gpu_hour_usd(topology: Topology, bom: Bom) -> float | None:
    value: float | None = design_tco(topology, bom)["gpu_hour_usd"]
    return value


def _rounded(out: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}
