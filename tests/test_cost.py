"""Cost a buyer can use: every example and reference design fully priced from the built-in books, price
books that override and discount, the TCO arithmetic, power that is never silently zero, the B300 XDR
parts, the workbook's formulas (recalculated by LibreOffice where it is installed) and the diff."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import DESIGNS, FIXTURES, ROOT, cli, rel
from tests.test_fabric_sizing import ROWS, _design
from validator.derive.bom import build_bom
from validator.pipeline import analyze, load_topology
from validator.resolve.catalog import builtin_catalog
from validator.resolve.catalog.check import CAGES
from validator.resolve.prices import builtin_books

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))
VALID_FIXTURES = sorted((FIXTURES / "valid").glob("*.yaml"))      # the heavier reference designs
# Parts no public figure prices or powers, shown as incomplete and named, not guessed. NVL36x2 tray: no price
# (NVL72 figures do not carry over: twice the switch trays, two racks). Arista 7816 R4: no list, reseller or
# analyst price; power only per line card (16 x 1,110 W max), not for the chassis: a lower bound, not a maximum.
# UFM appliances (extra_endpoints): a BOM line of their own, but NVIDIA publishes neither a price nor a power
# figure for the UFM Enterprise Appliance, so a design that does not state them has a partial capex and unknown
# IT power naming them (issue 27).
R4 = ["arista-7816r4-36pe"]
UNPRICED_BY_DESIGN = {"gb200-nvl36x2-inference": ["gb200-nvl36x2-tray"], "meta-llama3-roce-zones": R4,
                      "superpod-h100-4su": ["ufm"]}
UNKNOWN_POWER_BY_DESIGN = {"meta-llama3-roce-zones": R4, "superpod-h100-4su": ["ufm"]}


def _book(path: Path, prices: dict[str, object], **extra: object) -> Path:
    body = {"pricebook": 1, "name": "test book", "currency": "USD", "date": "2026-11-15",
            "source": "a test quote", "confidence": "quote", "prices": prices, **extra}
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


def _bom_json(*args: str) -> dict:
    code, out, err = cli("bom", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _lines(bom: dict, part: str) -> list[dict]:
    return [i for i in bom["items"] if i["part"] == part]


# ---------------------------------------------------------------- fully priced from the defaults


@pytest.mark.parametrize("path", EXAMPLES + VALID_FIXTURES, ids=lambda p: p.stem)
def test_every_example_has_a_complete_capex_and_known_power(path):
    bom = _bom_json(rel(path))
    unpriced, unpowered = UNPRICED_BY_DESIGN.get(path.stem, []), UNKNOWN_POWER_BY_DESIGN.get(path.stem, [])
    t, pw = bom["totals"], bom["power"]
    assert (t["unpriced_parts"], t["capex_complete"], not t["unpriced_lines"]) == (unpriced, not unpriced, not unpriced)
    assert t["capex_usd"] > 0 and pw["unknown_power_parts"] == unpowered and (pw["it_kw"] is None) == bool(unpowered)
    for item in bom["items"]:
        if item["extended_price"] is not None:      # every priced line says where its price comes from
            assert item["price_source"] and item["price_basis"]
            assert item["extended_low"] <= item["extended_price"] <= item["extended_high"]
            if item["price_basis"] in ("derived", "proxy"):      # and how it was derived, or what stands in
                assert item["price_derivation"], item["part"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['family']}-{r['su']}su")
def test_every_reference_design_is_priced_from_the_defaults(row):
    bom = build_bom(topology_of(_design(row)))
    ufm = ["ufm"] if "ufm" in str(_design(row)) else []     # no public UFM appliance price or power
    assert bom.totals["unpriced_parts"] == ufm and bom.totals["capex_complete"] == (not ufm)
    assert bom.power["unknown_power_parts"] == ufm and (bom.power["it_kw"] is None) == bool(ufm)


def _street(part: str):
    return next(b.book for b in builtin_books() if b.label == "built-in street").entry(part)


def test_gaps_filled_from_public_figures_carry_their_arithmetic():
    """Each figure from its source's numbers: derived and proxy prices say so in `basis`, with the arithmetic
    (or the product standing in) in `derivation`."""
    cny_per_usd = 7.1                               # the book's stated assumption
    expected = {
        "hgx-h100-dual-200g": 296_644,              # Dihuni HGX H100 8-GPU server listing, as hgx-h100
        "qsfp56-200g-fr4": 1_874 / 4,               # FS 800G 2xFR4 2 km: a quarter of its bandwidth
        "rdhx-passive-35": (50_000 + 200_000) / 2 / cny_per_usd,    # RDHx CNY 50,000-200,000 per door
        "storage-node": (200_000 + 800_000) / 2 / cny_per_usd,      # Lustre/GPFS node CNY 200,000-800,000
    }
    basis = {"hgx-h100-dual-200g": "proxy"}
    for part, price in expected.items():
        entry = _street(part)
        assert entry.price == pytest.approx(price, abs=50), part       # rounded to the book's precision
        assert entry.basis == basis.get(part, "derived") and entry.derivation, part
    cat = builtin_catalog()
    # 66 kW per NVL36x2 rack (Ming-Chi Kuo) over its 9 compute trays, the switch trays' share included
    assert cat.server("gb200-nvl36x2-tray").max_power_w == pytest.approx(66_000 / 9, abs=1)
    for part, watts in (("qsfp28-100g-lr4", 4.0), ("qsfp56-200g-fr4", 6.5)):  # LR4 datasheets; Fibridge FR4
        assert (cat.transceiver(part).power_w, cat.transceiver(part).power_basis) == (watts, "max")


def test_parts_without_a_public_figure_stay_unknown_and_say_why():
    for entry in map(_street, ("arista-7060x6-64pe", "arista-7816r4-36pe", "gb200-nvl36x2-tray", "pollara-400")):
        assert entry.price is None and entry.note and ("no public" in entry.note or "not found" in entry.note)
    sw = builtin_catalog().switch("arista-7816r4-36pe")
    assert (sw.power_max_w, sw.power_typical_w, sw.rack_units) == (None, None, None) and "not found" in sw.source


def test_dgx_b300_xdr_resolves_every_link_to_an_800g_part():
    """RA-11339-001 Table 3, 1 SU: 72 DGX B300, 576 node-leaf and 576 leaf-spine 800G links, 8 leaves
    and 4 spines. A single-port 800G module per ConnectX-8 cage; twin-port 2 x 800G modules at the
    switches (a leaf uses 576 / 8 + 576 / 8 = 144 ports, 72 modules; a spine 576 / 4 = 144 ports); one
    single-mode MPO fiber per link."""
    row = next(r for r in ROWS if r["family"] == "b300-xdr" and r["su"] == "1")
    bom = build_bom(topology_of(_design(row)))
    cat = builtin_catalog()
    counts: dict[tuple[str, str, str], int] = {}
    for i in bom.items:                     # fibers summed over their length classes (placement decides those)
        if i.category in ("transceiver", "cable"):
            key = (i.category, i.part, i.installed_in if i.category == "transceiver" else "any length")
            counts[key] = counts.get(key, 0) + i.qty - i.spares
    node_leaf, leaf_spine = int(row["node_leaf"]), int(row["leaf_spine"])
    assert counts == {("transceiver", "mms4a20-xm", "server"): node_leaf,
                      ("transceiver", "mms4a00-xm", "leaf"): (node_leaf + leaf_spine) // 2,
                      ("transceiver", "mms4a00-xm", "spine"): leaf_spine // 2,
                      ("cable", "fiber-mpo12-smf", "any length"): node_leaf + leaf_spine}
    assert all(cat.transceiver(p).speed_gbps == 800 for (k, p, _) in counts if k == "transceiver")
    assert cat.transceiver("mms4a00-xm").top == "finned" and cat.transceiver("mms4a20-xm").top == "flat"
    assert bom.totals["unpriced_lines"] == 0


# ---------------------------------------------------------------- price books


def test_price_book_layers_override_and_discount(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # --prices books stay inside the working directory's repository
    design = tmp_path / "d.yaml"
    shutil.copy(FIXTURES / "valid" / "small-training.yaml", design)
    _book(tmp_path / "repo.yaml", {"sonic-th5-64x800": 30000})
    (tmp_path / ".clusterplan.yaml").write_text("prices: [repo.yaml]\n", encoding="utf-8")
    base = _bom_json(str(design), "--config", str(tmp_path / ".clusterplan.yaml"))
    assert {i["unit_price"] for i in _lines(base, "sonic-th5-64x800")} == {30000}
    assert {i["price_origin"] for i in _lines(base, "sonic-th5-64x800")} == {"repo.yaml"}
    # a --prices book in another currency, with a switch discount: 40,000 EUR x 1.1 USD/EUR x (1 - 20%)
    cli_book = _book(tmp_path / "eur.yaml", {"sonic-th5-64x800": 40000}, currency="EUR", usd_per_unit=1.1,
                     discounts_pct={"switch": 20})
    over = _bom_json(str(design), "--config", str(tmp_path / ".clusterplan.yaml"), "--prices", str(cli_book))
    assert {i["unit_price"] for i in _lines(over, "sonic-th5-64x800")} == {35200}
    # the discount applies to lower layers too: the built-in sn2201 price less 20%
    builtin = {i["unit_price"] for i in _lines(base, "sn2201")}
    assert {i["unit_price"] for i in _lines(over, "sn2201")} == {round(p * 0.8, 2) for p in builtin}
    # the design's own costs.prices_usd wins over every book
    design.write_text(design.read_text() + "costs:\n  prices_usd: {sonic-th5-64x800: 1000}\n", encoding="utf-8")
    own = _bom_json(str(design), "--config", str(tmp_path / ".clusterplan.yaml"), "--prices", str(cli_book))
    assert {i["unit_price"] for i in _lines(own, "sonic-th5-64x800")} == {1000}


def test_cable_prices_per_length_class():
    bom = _bom_json("designs/superpod-h100-4su.yaml")
    fiber = {float(i["installed_in"].removesuffix(" m")): i["unit_price"] for i in _lines(bom, "fiber-mpo12-mmf")}
    assert fiber and all(price == pytest.approx(48 + 2.6 * length) for length, price in fiber.items())


def test_price_book_outside_the_repository_is_refused(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").mkdir()
    shutil.copy(FIXTURES / "valid" / "small-training.yaml", repo / "d.yaml")
    _book(tmp_path / "outside.yaml", {"sn2201": 1})
    (repo / ".clusterplan.yaml").write_text("prices: [../outside.yaml]\n", encoding="utf-8")
    code, _, err = cli("bom", str(repo / "d.yaml"), "--config", str(repo / ".clusterplan.yaml"))
    assert code == 1 and "PRC003" in err and "outside the repository" in err


def test_a_bad_price_book_is_reported_with_its_line(tmp_path):
    (tmp_path / ".git").mkdir()
    shutil.copy(FIXTURES / "valid" / "small-training.yaml", tmp_path / "d.yaml")
    (tmp_path / "bad.yaml").write_text("pricebook: 1\nname: x\ncurrency: EUR\ndate: 2026\nsource: abc\n"
                                       "confidence: quote\nprices: {sn2201: -5}\n", encoding="utf-8")
    (tmp_path / ".clusterplan.yaml").write_text("prices: [bad.yaml]\n", encoding="utf-8")
    code, _, err = cli("bom", str(tmp_path / "d.yaml"), "--config", str(tmp_path / ".clusterplan.yaml"))
    assert code == 1 and "PRC001" in err and "bad.yaml:7:18" in err and "greater than or equal to 0" in err
    (tmp_path / "bad.yaml").write_text("pricebook: 1\nname: x\ncurrency: EUR\ndate: 2026\nsource: abc\n"
                                       "confidence: quote\nprices: {sn2201: 5}\n", encoding="utf-8")
    code, _, err = cli("bom", str(tmp_path / "d.yaml"), "--config", str(tmp_path / ".clusterplan.yaml"))
    assert code == 1 and "a EUR book needs `usd_per_unit`" in err


# ---------------------------------------------------------------- power on one basis, unknown stays unknown


def test_unknown_power_is_a_finding_and_shown_as_unknown(tmp_path):
    path = ROOT / "tests" / "rules" / "BOM002" / "fail.yaml"
    findings = analyze(path, rel(path)).findings
    assert [(f.rule, f.severity) for f in findings] == [("BOM002", "warning")]
    assert "fabric-manager" in findings[0].message
    bom = _bom_json(rel(path))
    assert bom["power"]["it_kw"] is None and bom["power"]["facility_kw"] is None
    assert bom["power"]["it_kw_known"] > 0 and bom["power"]["unknown_power_parts"] == ["fabric-manager"]
    assert bom["tco"]["gpu_hour_usd"] is None
    assert {i["power_basis"] for i in _lines(bom, "fabric-manager")} == {None}
    _, text, _ = cli("bom", rel(path))
    assert "IT power unknown" in text and "no power figure for fabric-manager" in text
    assert all("unknown" in line for line in text.splitlines() if line.startswith("appliance    fabric-manager"))
    out = tmp_path / "b.xlsx"
    assert cli("bom", rel(path), "-f", "xlsx", "-o", str(out), "--timestamp", "2026-12-01")[0] == 0
    from openpyxl import load_workbook

    wb = load_workbook(out)
    power = {r[0].value: r[1].value for r in wb["Power & Cooling"].iter_rows(min_row=2)}
    assert power["appliances"] == "unknown" and "unknown" in power["IT power"]
    assert {r[6].value for r in wb["BOM"].iter_rows(min_row=2) if r[1].value == "fabric-manager"} == {"unknown"}


def test_switch_optics_are_not_counted_twice():
    """QM9700's 1,720 W maximum is with active modules in its cages: its modules add nothing again."""
    bom = build_bom(load_topology(DESIGNS / "superpod-h100-4su.yaml"))
    assert builtin_catalog().switch("qm9700").power_max_includes_optics
    at_qm9700 = [i for i in bom.items if i.category == "transceiver" and i.installed_in in ("leaf", "spine")
                 and i.fabric in ("compute", "storage")]
    assert at_qm9700 and all(i.power_basis == "included" for i in at_qm9700)
    node = [i for i in bom.items if i.category == "transceiver" and i.installed_in not in ("leaf", "spine", "core")]
    expected = sum((i.qty - i.spares) * i.unit_power_w for i in node) / 1000
    assert bom.power["optics_kw"] == pytest.approx(expected)


def test_storage_nodes_and_nvl72_rack_parts_are_lines():
    bom = build_bom(load_topology(DESIGNS / "gb200-nvl72-mixtral.yaml"))
    lines = {i.part: i for i in bom.items}
    # 8 NVL72 racks: 9 NVLink switch trays and 8 power shelves each (DGX GB200 user guide; BCM power shelves)
    assert lines["nvlink5-switch-tray"].qty == 8 * 9 and lines["nvl72-power-shelf"].qty == 8 * 8
    assert lines["nvlink5-switch-tray"].included_in == "server"
    assert bom.power["storage_kw"] == pytest.approx(8 * 2000 / 1000)   # the design's 8 nodes x 2,000 W


def test_every_catalog_switch_and_nic_states_its_cage():
    cat = builtin_catalog()
    for sw in cat.entries["switch"].values():
        assert all(g.form_factor in CAGES for g in sw.port_groups), sw.id
    nics = [n for n in cat.entries["nic"].values() if n.category != "bmc"]
    # Pollara 400: AMD's product page and the DPDK ionic guide say only "single-port 400G"; no datasheet names
    # the cage, so it stays "unknown" (set form_factor in a catalog override) rather than a guessed QSFP112
    assert {n.id for n in nics if n.form_factor not in CAGES} == {"pollara-400"}
    assert all(n.top == "flat" for n in nics if n.form_factor == "OSFP")
    for x in cat.entries["transceiver"].values():
        assert x.form_factor in CAGES and (x.form_factor != "OSFP" or x.top is not None), x.id


def test_catalog_check_reports_gaps_with_the_books_reasons():
    code, out, _ = cli("catalog", "check", "--format", "json")
    assert code == 0
    gaps = {(g["id"], g["field"]): g["detail"] for g in json.loads(out)["gaps"]}
    assert gaps[("sn5610", "price")] == "no public figure found"
    assert gaps[("hgx-b300", "power")] == "no max_power_w"
    assert gaps[("sn5600", "power")].startswith("typical only")
    assert ("qm9700", "price") not in gaps and ("dgx-b300", "price") not in gaps
    assert not [k for k in gaps if k[1] == "source"]      # every book entry names a catalog part
    assert cli("catalog", "check", "--strict")[0] == 1


def test_sn4600c_is_spectrum_3():
    sw = builtin_catalog().switch("sn4600c")
    assert sw.asic == "Spectrum-3" and "Spectrum-3" in sw.name


# ---------------------------------------------------------------- the workbook


def test_workbook_prices_are_formulas_with_category_subtotals(tmp_path):
    from openpyxl import load_workbook

    out = tmp_path / "w.xlsx"
    cli("bom", "designs/superpod-h100-4su.yaml", "-f", "xlsx", "-o", str(out), "--timestamp", "2026-12-01")
    ws = load_workbook(out)["BOM"]
    rows = [r for r in ws.iter_rows(min_row=2) if r[0].value]
    items = [r for r in rows if r[0].value not in ("subtotal", "total", "unpriced lines", "capex low", "capex high")]
    for r in items:
        n = r[0].row
        assert r[7].value == f'=IF(L{n}="","",ROUND(L{n}*(1-M{n}/100),2))'
        assert r[8].value == (None if r[10].value else f'=IF(H{n}="","",D{n}*H{n})')
    subtotals = {r[1].value for r in rows if r[0].value == "subtotal"}
    assert subtotals == {r[0].value for r in items if not r[10].value}
    total = next(r for r in rows if r[0].value == "total")
    assert total[8].value.startswith("=SUM(I") and total[3].value is None   # no quantity total
    low = next(r for r in rows if r[0].value == "capex low")
    assert low[8].value == f"=SUMPRODUCT(I2:I{len(items) + 1},Sources!D2:D{len(items) + 1})"


SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice not installed (.ci/run installs libreoffice-calc)")
def test_libreoffice_recalculates_the_workbook_after_a_price_is_typed(tmp_path):
    """Type a price into the one unpriced line (an Arista spine) and raise another line's price: after
    LibreOffice recalculates, the totals equal the JSON BOM's plus what was typed."""
    from openpyxl import load_workbook

    design = ROOT / "tests" / "rules" / "BOM001" / "fail.yaml"
    bom = _bom_json(rel(design))
    src = tmp_path / "w.xlsx"
    cli("bom", rel(design), "-f", "xlsx", "-o", str(src), "--timestamp", "2026-12-01")
    wb = load_workbook(src)
    ws = wb["BOM"]
    arista = next(r for r in ws.iter_rows(min_row=2) if r[1].value == "arista-7060x6-64pe")
    rack = next(r for r in ws.iter_rows(min_row=2) if r[1].value == "rack-48u")
    arista[11].value = 70000
    rack[11].value = rack[11].value + 500
    wb.save(tmp_path / "edited.xlsx")
    subprocess.run([SOFFICE, "--headless", f"-env:UserInstallation=file://{tmp_path}/profile", "--convert-to", "xlsx",
                    "--outdir", str(tmp_path / "out"), str(tmp_path / "edited.xlsx")], check=True, timeout=180,
                   capture_output=True)
    calc = load_workbook(tmp_path / "out" / "edited.xlsx", data_only=True)["BOM"]
    values = {(r[0].value, r[1].value): r[8].value for r in calc.iter_rows(min_row=2)}
    arista_qty = next(i["qty"] for i in bom["items"] if i["part"] == "arista-7060x6-64pe")
    rack_line = next(i for i in bom["items"] if i["part"] == "rack-48u")
    rack_qty = rack_line["qty"]
    added = 70000 * arista_qty + 500 * rack_qty
    t = bom["totals"]
    assert values[("total", None)] == pytest.approx(t["capex_usd"] + added, abs=0.01)
    assert values[("subtotal", "switch")] == pytest.approx(t["capex_by_category_usd"]["switch"]
                                                           + 70000 * arista_qty, abs=0.01)
    assert values[("unpriced lines", None)] == 0
    # the range moves too: the typed Arista price counts as a quote (low = high = it), the rack's 500 more moves
    # each end by its multiplier (the rack line's own low / high over its expected price)
    low_x, high_x = (rack_line[k] / rack_line["extended_price"] for k in ("extended_low", "extended_high"))
    assert values[("capex low", None)] == pytest.approx(t["capex_low"] + 70000 * arista_qty + 500 * rack_qty * low_x,
                                                        abs=1)
    assert values[("capex high", None)] == pytest.approx(t["capex_high"] + 70000 * arista_qty
                                                         + 500 * rack_qty * high_x, abs=1)
    summary = {r[0].value: r[1].value for r in load_workbook(tmp_path / "out" / "edited.xlsx", data_only=True)[
        "Summary"].iter_rows(min_row=2)}
    assert summary["Capex, priced lines (USD)"] == pytest.approx(values[("total", None)])
    assert summary["Capex low (USD)"] == pytest.approx(values[("capex low", None)])


# ---------------------------------------------------------------- diff


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=repo, check=True,
                   capture_output=True)


def test_diff_reports_a_price_book_change(tmp_path, monkeypatch):
    """A repository's price book raises the QM9700: the diff against the last commit shows the capex
    change of the design using it, though the design itself did not change (RA-11333-001 Table 4,
    1 SU: 8 leaves and 4 spines)."""
    row = next(r for r in ROWS if r["family"] == "h100-table4" and r["su"] == "1")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "su1.yaml").write_text(yaml.safe_dump(_design(row), sort_keys=False), encoding="utf-8")
    _book(repo / "prices.yaml", {"qm9700": 40000})
    (repo / ".clusterplan.yaml").write_text("prices: [prices.yaml]\n", encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _book(repo / "prices.yaml", {"qm9700": 45000})
    monkeypatch.chdir(repo)
    code, out, _ = cli("diff", "--git-ref", "HEAD", "--format", "json")
    assert code == 0
    (design,) = json.loads(out)["designs"]
    assert design["file"] == "su1.yaml" and design["status"] == "changed"
    assert design["metrics"]["capex"]["change"] == pytest.approx(5000 * (int(row["leaf"]) + int(row["spine"])))
    assert design["unpriced_note"] == ("capex is partial: base has 1 unpriced BOM line(s) (ufm); head has 1 "
                                       "unpriced BOM line(s) (ufm)")     # no public UFM appliance price


def test_diff_states_unpriced_lines_on_either_side(tmp_path):
    base = FIXTURES / "valid" / "small-training.yaml"
    head = ROOT / "tests" / "rules" / "BOM001" / "fail.yaml"       # the same design with an unpriced spine switch
    code, out, _ = cli("diff", str(base), str(head))
    assert code == 0
    assert "capex is partial: head has 1 unpriced BOM line(s) (arista-7060x6-64pe)" in out
    _, md, _ = cli("diff", str(base), str(head), "--format", "md")
    assert "**Unpriced BOM lines**" in md and "arista-7060x6-64pe" in md
