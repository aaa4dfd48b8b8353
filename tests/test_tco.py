"""A TCO a finance team accepts: the arithmetic, every assumption stated beside the result with its source,
one design's TCO recomputed by hand; and what the capex counts once and never as zero: appliances as
lines, switch optics inside a maximum that includes them, NVL72 racks in the trays' price, price bases and
the capex range."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import DESIGNS, FIXTURES, cli
from tests.test_cost import _bom_json
from validator.derive.bom import build_bom
from validator.derive.cost import TcoInputs, tco
from validator.pipeline import analyze, load_topology
from validator.resolve.catalog import builtin_catalog

# ---------------------------------------------------------------- TCO


def test_tco_arithmetic():
    out = tco(TcoInputs(capex_usd=1_000_000, it_kw=100, gpus=8, pue=1.5, electricity_usd_per_kwh=0.1,
                        utilization=0.5, depreciation_years=5, support_pct_per_year=10, hours_per_year=8760))
    # energy 100 kW x 1.5 x 4,380 busy hours x $0.1; depreciation 1M / 5; support 10% of 1M
    assert out["energy_usd_per_year"] == pytest.approx(65_700)
    assert out["depreciation_usd_per_year"] == pytest.approx(200_000)
    assert out["support_usd_per_year"] == pytest.approx(100_000)
    assert out["total_usd_per_year"] == pytest.approx(365_700)
    assert out["gpu_hour_usd"] == pytest.approx(365_700 / (8 * 4_380))
    partial = tco(TcoInputs(None, 100, 8, 1.5, 0.1, 0.5, 5, 10))
    assert partial["total_usd_per_year"] is None and partial["gpu_hour_usd"] is None


def test_cost_per_token_reads_the_design_tco():
    from validator.derive import Derived
    from validator.derive.cost import design_tco

    topo = load_topology(DESIGNS / "inference-disaggregated-h100.yaml")
    derived = Derived(topo)
    est = derived.estimate.as_dict()
    rate = design_tco(topo, derived.bom)["gpu_hour_usd"]
    assert rate == pytest.approx(derived.bom.tco["gpu_hour_usd"])
    assert est["cost_per_million_tokens"] == pytest.approx(rate / (est["output_tokens_per_s_per_gpu"] * 3600 / 1e6),
                                                           rel=1e-3)


def test_tco_inputs_from_the_repository_and_the_design(tmp_path):
    shutil.copy(FIXTURES / "valid" / "small-training.yaml", tmp_path / "d.yaml")
    (tmp_path / ".clusterplan.yaml").write_text(
        "tco: {electricity_usd_per_kwh: 0.2, utilization: 0.5, depreciation_years: 3, support_pct_per_year: 0,\n"
        "      cost_of_capital_pct: 0, colocation_usd_per_kw_month: 0, expected_draw_fraction: 1}\n",
        encoding="utf-8")
    bom = _bom_json(str(tmp_path / "d.yaml"), "--config", str(tmp_path / ".clusterplan.yaml"))
    inputs = bom["tco"]["inputs"]
    assert (inputs["electricity_usd_per_kwh"], inputs["utilization"], inputs["depreciation_years"]) == (0.2, 0.5, 3)
    assert bom["tco"]["depreciation_usd_per_year"] == pytest.approx(bom["totals"]["capex_usd"] / 3, rel=1e-6)
    facility = bom["power"]["facility_kw"]
    assert bom["tco"]["energy_usd_per_year"] == pytest.approx(facility * 8760 * 0.5 * 0.2, rel=1e-6)
    a = bom["tco"]["assumptions"]
    assert a["utilization"]["from"] == ".clusterplan.yaml tco" and a["pue"]["from"] == "default"
    assert "Uptime Institute" in a["pue"]["source"]          # a default names its source beside the result


def test_tco_recomputed_by_hand(tmp_path):
    """small-training (32 DGX H100, 256 GPUs) with every assumption set in .clusterplan.yaml, the TCO redone
    by hand from the BOM's capex and IT maximum: an annuity at 8 % over 4 years, DGX support at 20 % and the
    rest at 10 %, energy at 0.7 of the maximum x 60 % utilization, PUE 1.25 at $0.10/kWh, colocation
    $200/kW-month on the maximum, $300,000 of staff."""
    shutil.copy(FIXTURES / "valid" / "small-training.yaml", tmp_path / "d.yaml")
    (tmp_path / ".clusterplan.yaml").write_text(
        "tco: {electricity_usd_per_kwh: 0.10, pue: 1.25, utilization: 0.6, depreciation_years: 4,\n"
        "      support_pct_per_year: 10, support_pct_dgx: 20, expected_draw_fraction: 0.7,\n"
        "      colocation_usd_per_kw_month: 200, cost_of_capital_pct: 8, staff_usd_per_year: 300000}\n",
        encoding="utf-8")
    bom = _bom_json(str(tmp_path / "d.yaml"), "--config", str(tmp_path / ".clusterplan.yaml"))
    capex, it_kw = bom["totals"]["capex_usd"], bom["power"]["it_kw"]
    dgx = 32 * 270_000                       # the book's DGX H100 (SemiAnalysis ~$270,000), no spares on servers
    capital = capex * 0.08 / (1 - 1.08 ** -4)
    support = dgx * 0.20 + (capex - dgx) * 0.10
    energy = it_kw * 0.7 * 0.6 * 1.25 * 8760 * 0.10
    colocation = it_kw * 200 * 12
    total = capital + support + energy + colocation + 300_000
    c = bom["tco"]
    assert c["depreciation_usd_per_year"] == pytest.approx(capex / 4, rel=1e-6)
    assert c["cost_of_capital_usd_per_year"] == pytest.approx(capital - capex / 4, rel=1e-6)
    assert c["support_usd_per_year"] == pytest.approx(support, rel=1e-6)
    assert c["energy_usd_per_year"] == pytest.approx(energy, rel=1e-6)
    assert c["colocation_usd_per_year"] == pytest.approx(colocation, rel=1e-6)
    assert c["total_usd_per_year"] == pytest.approx(total, rel=1e-6)
    assert c["gpu_hour_usd"] == pytest.approx(total / (256 * 8760 * 0.6), rel=1e-3)
    assert c["gpu_hour_usd_low"] < c["gpu_hour_usd"] < c["gpu_hour_usd_high"]
    _, text, _ = cli("bom", str(tmp_path / "d.yaml"), "--config", str(tmp_path / ".clusterplan.yaml"))
    assert "cost of capital at 8%" in text and "colocation" in text and "expected draw" in text
    assert "cost_of_capital_pct 8 (.clusterplan.yaml tco)" in text


# ---------------------------------------------------------------- nothing counted twice, nothing as zero


def test_tomahawk5_maximum_includes_its_optics():
    """Arista 7060X6-64PE datasheet: 640 W typical (passive), 2,218 W maximum. (2,218 - 640) / 64 ports =
    24.66 W per port above the typical figure: more than any 800G OSFP module draws (MMA4Z00-NS 15 W,
    MMS4X00-NS 17 W max, NVIDIA LinkX), so the maximum is with modules in the cages and the BOM must not
    add 15-17 W per module again. On the RoCE example the switch-end modules then add nothing."""
    per_port = (2218 - 640) / 64
    assert per_port == pytest.approx(24.66, abs=0.01) and per_port > 17
    for part in ("sonic-th5-64x800", "arista-7060x6-64pe"):
        sw = builtin_catalog().switch(part)
        assert (sw.power_typical_w, sw.power_max_w, sw.power_max_includes_optics) == (640, 2218, True)
    bom = build_bom(load_topology(DESIGNS / "roce-h100-2tier.yaml"))
    at_switches = [i for i in bom.items if i.category == "transceiver" and i.installed_in in ("leaf", "spine")
                   and i.fabric == "compute"]
    assert at_switches and all(i.power_basis == "included" and i.counted_w == 0 for i in at_switches)
    # optics power is the node-end modules only (spares on the shelf draw nothing)
    node = [i for i in bom.items if i.category == "transceiver" and i.power_basis != "included"]
    assert node and all(i.installed_in not in ("leaf", "spine", "core") for i in node)
    assert bom.power["optics_kw"] == pytest.approx(sum((i.qty - i.spares) * i.unit_power_w for i in node) / 1000,
                                                   abs=1e-3)


def test_nvl72_racks_are_not_bought_twice():
    """GB200 NVL72: the tray price is the rack's ~$3.1M / 18 (SemiAnalysis), rack included; of the design's
    cabinets the 8 NVL72 racks are in that price and only the network racks are bought (as many as the rack
    plan has: its air-cooled network racks are packed within the air limit, FAC005)."""
    topology = load_topology(DESIGNS / "gb200-nvl72-mixtral.yaml")
    bom = build_bom(topology)
    network = topology.racks.count("network")
    gpu = topology.racks.count("gpu")
    assert gpu == 8                          # 144 trays / 18 per NVL72 rack
    racks = [i for i in bom.items if i.category == "rack"]
    assert sorted((i.qty, i.included_in) for i in racks) == sorted([(network, None), (gpu, "server")])
    bought = next(i for i in racks if i.included_in is None)
    assert bom.totals["capex_by_category_usd"]["rack"] == pytest.approx(network * bought.unit_price)
    tray = next(i for i in bom.items if i.category == "server")
    assert tray.power_basis == "typical"     # ~120 kW per rack / 18: an approximate figure, not a rated maximum
    assert "gb200-nvl72-tray" in bom.power["typical_parts"]


def test_ufm_appliances_are_lines_and_their_unknowns_are_named():
    path = DESIGNS / "superpod-h100-4su.yaml"
    bom = build_bom(load_topology(path))
    (ufm,) = [i for i in bom.items if i.category == "appliance"]
    assert (ufm.part, ufm.qty, ufm.fabric, ufm.unit_price, ufm.power_basis) == ("ufm", 1, "compute", None, None)
    assert bom.power["unknown_power_parts"] == ["ufm"] and bom.power["it_kw"] is None
    assert bom.power["it_kw_known"] > 0 and not bom.totals["capex_complete"] and bom.tco["gpu_hour_usd"] is None
    rules = {f.rule for f in analyze(path, "designs/superpod-h100-4su.yaml").findings}
    assert {"BOM001", "BOM002"} <= rules          # validate says so


def test_a_stated_appliance_power_and_price_count(tmp_path):
    text = (DESIGNS / "superpod-h100-4su.yaml").read_text(encoding="utf-8")
    assert "extra_endpoints: [{name: ufm, count: 1, ports: 4}]" in text
    design = tmp_path / "d.yaml"
    design.write_text(text.replace("extra_endpoints: [{name: ufm, count: 1, ports: 4}]",
                                   "extra_endpoints: [{name: ufm, count: 1, ports: 4, power_w: 800, "
                                   "price_usd: 30000}]"), encoding="utf-8")
    bom = build_bom(load_topology(design))
    assert bom.power["appliances_kw"] == 0.8 and bom.power["unknown_power_parts"] == []
    assert bom.totals["capex_complete"] and bom.totals["capex_by_category_usd"]["appliance"] == 30000


# ---------------------------------------------------------------- price bases and the capex range


def test_line_range_from_the_source_else_the_basis():
    """H100 SXM: Raymond James '$25,000 to $30,000' (the source's range, $27,500 expected); a DGX H200 priced as
    an HGX listing is a proxy: 0.57-1.75x (validator/data/price_ranges.yaml)."""
    from validator.resolve.prices import PriceTable, basis_spread, builtin_books

    table = PriceTable(builtin_books())
    h100 = table.quote("h100-sxm", "gpu")
    assert h100 is not None and (h100.basis, h100.unit_usd(), h100.unit_range()) == ("street", 27500, (25000, 30000))
    dgx = table.quote("dgx-h200", "server")
    assert dgx is not None and dgx.basis == "proxy" and dgx.derivation
    assert dgx.unit_range() == (round(312667 * 0.57, 2), round(312667 * 1.75, 2))
    assert basis_spread("proxy") == (0.57, 1.75)


def test_capex_range_in_json_and_text():
    bom = _bom_json("designs/roce-h100-2tier.yaml")
    t = bom["totals"]
    assert t["capex_low"] < t["capex_expected"] == t["capex_usd"] < t["capex_high"]
    priced = [i for i in bom["items"] if i["extended_price"] is not None]
    assert t["capex_low"] == pytest.approx(sum(i["extended_low"] for i in priced), abs=0.05)
    assert t["capex_high"] == pytest.approx(sum(i["extended_high"] for i in priced), abs=0.05)
    assert sum(t["capex_by_basis_usd"].values()) == pytest.approx(t["capex_usd"], abs=0.05)
    _, text, _ = cli("bom", "designs/roce-h100-2tier.yaml")
    low, high = t["capex_low"], t["capex_high"]
    assert f"capex ${t['capex_expected']:,.0f} expected, range ${low:,.0f} to ${high:,.0f}" in text
    assert "derived or proxy prices" in text and "price basis" in text.splitlines()[1]


def test_a_book_written_with_confidence_reads_as_its_basis(tmp_path):
    from validator.resolve.prices import parse_price_book

    book = parse_price_book("pricebook: 1\nname: old\ncurrency: USD\ndate: 2026\nsource: a quote\n"
                            "confidence: analyst-estimate\nprices: {qm9700: {price: 40000, confidence: quote}}\n",
                            "old.yaml")
    assert (book.basis, book.source_class) == ("street", "analyst")
    entry = book.entry("qm9700")
    assert entry is not None and (entry.basis, entry.source_class) == ("quote", "vendor")


def test_diff_shows_the_capex_range_and_gates_either_end(tmp_path):
    """The same DGX H100 price typed into the design (a buyer's own figure: no spread) leaves the expected
    capex unchanged but narrows its range: the low end rises, the high end falls; a gate can hold either."""
    import json

    base = FIXTURES / "valid" / "small-training.yaml"
    head = tmp_path / "head.yaml"
    head.write_text(base.read_text(encoding="utf-8") + "costs:\n  prices_usd: {dgx-h100: 270000}\n", encoding="utf-8")
    code, out, _ = cli("diff", str(base), str(head), "--format", "json")
    assert code == 0
    (d,) = json.loads(out)["designs"]
    m = d["metrics"]
    assert m["capex"]["change"] == 0 and m["capex_low"]["change"] > 0 and m["capex_high"]["change"] < 0
    assert cli("diff", str(base), str(head), "--fail-if", "capex > +1%")[0] == 0
    assert cli("diff", str(base), str(head), "--fail-if", "capex_low > +1%")[0] == 1
    _, text, _ = cli("diff", str(base), str(head))
    assert "capex, low end" in text and "capex, high end" in text


def test_catalog_check_lists_prices_by_basis_and_fails_on_an_underived_proxy(tmp_path, monkeypatch):
    import json

    code, out, _ = cli("catalog", "check", "--format", "json")
    assert code == 0
    rows = {r["id"]: r for r in json.loads(out)["prices"]}
    assert (rows["dgx-h200"]["basis"], rows["h100-sxm"]["source_class"]) == ("proxy", "analyst")
    assert rows["dgx-h100"]["date"] == "2023-05" and rows["dgx-h100"]["age_months"] > 30
    assert not [r for r in rows.values() if r["problem"]]      # every built-in derived or proxy says how
    _, text, _ = cli("catalog", "check")
    assert "prices by basis:" in text and "prices by source class:" in text
    monkeypatch.chdir(tmp_path)
    (tmp_path / "book.yaml").write_text("pricebook: 1\nname: b\ncurrency: USD\ndate: 2026-11\nsource: our guess\n"
                                        "basis: proxy\nprices: {sn5610: 30000}\n", encoding="utf-8")
    code, text, _ = cli("catalog", "check", "--prices", "book.yaml")
    assert code == 1 and "PROBLEM: proxy price without its derivation" in text
