"""Total cost of ownership per year, and the cost of a busy GPU-hour, with every assumption stated.

    expected kW        = IT kW (maximum) x expected draw fraction x utilization
    energy per year    = expected kW x PUE x hours per year x price per kWh
    colocation / year  = IT kW (maximum: the capacity contracted) x $ per kW-month x 12
    capital / year     = capex x r / (1 - (1 + r)^-years)     (an annuity: depreciation plus financing)
      depreciation     = capex / years;  cost of capital = capital - depreciation
    support / year     = DGX systems' price x DGX support % + the rest of the capex x support %
    total / year       = capital + support + energy + colocation + staff
    cost per GPU-hour  = total / (GPUs x hours per year x utilization)

The maximum is for facility sizing (the BOM's IT and facility kW); energy is charged at the expected draw.
The cost of a GPU-hour is of a busy hour: a cluster busy half the year pays its capital over half the
hours. Capex is the BOM's expected figure, every line; the GPU-hour also at the capex range's ends. A BOM
with unpriced lines or a part of unknown power gives no TCO (None), never a silently smaller one.
Inputs, first found wins: the design (`site.pue`, `site.electricity_usd_per_kwh`,
`costs.amortization_years`, `costs.support_pct_per_year`, `costs.utilization`), `.clusterplan.yaml`
`tco:`, validator/data/defaults.yaml (each with its source); `assumptions` says which for each.
The inference estimate's cost per million tokens and the training cost per run read `gpu_hour_usd`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from validator.base.facts import fact
from validator.base.tables import hours_per_year, sourced
from validator.expand.topology import Topology

if TYPE_CHECKING:
    from validator.derive.bom import Bom

DGX_PREFIX = "dgx-"     # NVIDIA DGX systems: their own support rate (defaults.yaml support_pct_dgx)


@fact
class TcoInputs:
    capex_usd: float | None      # None: the BOM has unpriced lines
    it_kw: float | None          # None: a part's power is unknown (the maximum, for facility sizing)
    gpus: int
    pue: float
    electricity_usd_per_kwh: float
    utilization: float
    depreciation_years: float
    support_pct_per_year: float
    hours_per_year: float = 8760.0
    dgx_capex_usd: float = 0.0   # the part of the capex in DGX systems
    support_pct_dgx: float = 0.0
    expected_draw_fraction: float = 1.0
    colocation_usd_per_kw_month: float = 0.0
    cost_of_capital_pct: float = 0.0
    staff_usd_per_year: float = 0.0
    capex_low_usd: float | None = None
    capex_high_usd: float | None = None


def capital_charge(capex: float, rate_pct: float, years: float) -> float:
    """Yearly payment that repays `capex` over `years` at `rate_pct` (straight line when the rate is 0)."""
    r = rate_pct / 100
    return capex / years if r == 0 else capex * r / (1 - (1 + r) ** -years)


def _per_year(inp: TcoInputs, capex: float | None) -> float | None:
    """Total per year at a capex (None when the capex or the power is unknown)."""
    if capex is None or inp.it_kw is None:
        return None
    support = (inp.dgx_capex_usd * inp.support_pct_dgx + (capex - inp.dgx_capex_usd) * inp.support_pct_per_year) / 100
    expected_kw = inp.it_kw * inp.expected_draw_fraction * inp.utilization
    energy = expected_kw * inp.pue * inp.hours_per_year * inp.electricity_usd_per_kwh
    colocation = inp.it_kw * inp.colocation_usd_per_kw_month * 12
    return (capital_charge(capex, inp.cost_of_capital_pct, inp.depreciation_years) + support + energy + colocation
            + inp.staff_usd_per_year)


def tco(inp: TcoInputs) -> dict[str, Any]:
    """Yearly cost of ownership and the cost of a busy GPU-hour; a figure that needs an unknown is None."""
    busy_hours = inp.hours_per_year * inp.utilization
    kw = inp.it_kw
    expected_kw = None if kw is None else kw * inp.expected_draw_fraction * inp.utilization
    energy_kwh = None if expected_kw is None else expected_kw * inp.pue * inp.hours_per_year
    energy = None if energy_kwh is None else energy_kwh * inp.electricity_usd_per_kwh
    capex = inp.capex_usd
    depreciation = None if capex is None else capex / inp.depreciation_years
    capital = None if capex is None else capital_charge(capex, inp.cost_of_capital_pct, inp.depreciation_years)
    support = None if capex is None else (inp.dgx_capex_usd * inp.support_pct_dgx
                                          + (capex - inp.dgx_capex_usd) * inp.support_pct_per_year) / 100
    total = _per_year(inp, capex)

    def per_hour(value: float | None) -> float | None:
        return None if value is None or not inp.gpus or not busy_hours else value / (inp.gpus * busy_hours)

    return {"inputs": asdict(inp), "expected_kw": expected_kw,
            "energy_mwh_per_year": None if energy_kwh is None else energy_kwh / 1000,
            "energy_usd_per_year": energy, "depreciation_usd_per_year": depreciation,
            "cost_of_capital_usd_per_year": None if capital is None or depreciation is None else capital - depreciation,
            "support_usd_per_year": support,
            "colocation_usd_per_year": None if kw is None else kw * inp.colocation_usd_per_kw_month * 12,
            "staff_usd_per_year": inp.staff_usd_per_year, "total_usd_per_year": total,
            "gpu_hour_usd": per_hour(total),
            "gpu_hour_usd_low": per_hour(_per_year(inp, inp.capex_low_usd) if total is not None else None),
            "gpu_hour_usd_high": per_hour(_per_year(inp, inp.capex_high_usd) if total is not None else None)}


# the assumptions a TCO states beside its result: name -> (design field, or None)
ASSUMPTIONS: dict[str, str | None] = {
    "pue": "site.pue", "electricity_usd_per_kwh": "site.electricity_usd_per_kwh",
    "utilization": "costs.utilization", "depreciation_years": "costs.amortization_years",
    "support_pct_per_year": "costs.support_pct_per_year", "support_pct_dgx": None, "expected_draw_fraction": None,
    "colocation_usd_per_kw_month": None, "cost_of_capital_pct": None, "staff_usd_per_year": None}


def _design_value(topology: Topology, path: str | None) -> float | None:
    if path is None:
        return None
    obj: Any = topology.resolved.design
    for key in path.split("."):
        obj = getattr(obj, key, None)
    return None if obj is None else float(obj)


def assumptions(topology: Topology) -> dict[str, dict[str, Any]]:
    """Every TCO assumption with its value and where it comes from (design, .clusterplan.yaml or default)."""
    r = topology.resolved
    table = sourced("defaults.yaml", "defaults")
    out: dict[str, dict[str, Any]] = {}
    for name, path in ASSUMPTIONS.items():
        own, repo = _design_value(topology, path), r.costing.tco.get(name)
        if own is not None:
            out[name] = {"value": own, "from": f"design {path}", "source": "the design"}
        elif repo is not None:
            out[name] = {"value": float(repo), "from": ".clusterplan.yaml tco", "source": "the repository"}
        else:
            out[name] = {"value": float(table[name].value), "from": "default", "source": table[name].source}
    return out


def tco_inputs(topology: Topology, capex_usd: float | None, it_kw: float | None,
               bom: Bom | None = None) -> TcoInputs:
    a = {name: stated["value"] for name, stated in assumptions(topology).items()}
    dgx = 0.0
    low = high = None
    if bom is not None:
        dgx = sum(i.extended_price or 0.0 for i in bom.items
                  if i.category == "server" and i.part.startswith(DGX_PREFIX))
        if capex_usd is not None:
            low, high = bom.totals["capex_low"], bom.totals["capex_high"]
    return TcoInputs(
        capex_usd=capex_usd, it_kw=it_kw, gpus=topology.gpus, pue=a["pue"],
        electricity_usd_per_kwh=a["electricity_usd_per_kwh"], utilization=a["utilization"],
        depreciation_years=a["depreciation_years"], support_pct_per_year=a["support_pct_per_year"],
        hours_per_year=hours_per_year(), dgx_capex_usd=dgx,
        support_pct_dgx=a["support_pct_dgx"], expected_draw_fraction=a["expected_draw_fraction"],
        colocation_usd_per_kw_month=a["colocation_usd_per_kw_month"], cost_of_capital_pct=a["cost_of_capital_pct"],
        staff_usd_per_year=a["staff_usd_per_year"], capex_low_usd=low, capex_high_usd=high)


def design_tco(topology: Topology, bom: Bom) -> dict[str, Any]:
    """The TCO of a design from its BOM: every line priced and every power figure known, else None."""
    capex = bom.totals["capex_usd"] if bom.totals["capex_complete"] else None
    out = _rounded(tco(tco_inputs(topology, capex, bom.power["it_kw"], bom)))
    out["assumptions"] = assumptions(topology)
    return out


def gpu_hour_usd(topology: Topology, bom: Bom) -> float | None:
    value: float | None = design_tco(topology, bom)["gpu_hour_usd"]
    return value


def _rounded(out: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}
