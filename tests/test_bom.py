"""BOM, cabling plan and workbook: golden files, the SuperPOD reference counts, workbook read-back."""

from __future__ import annotations

import csv
import io
import json

import jsonschema
import pytest

from tests.builders import topology_of
from tests.helpers import DESIGNS, ROOT, check_golden, cli, rel
from tests.test_fabric_sizing import ROWS, _design
from validator.derive import Derived
from validator.derive.bom import build_bom
from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.pipeline import load_topology

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))
SCHEMA = json.loads((ROOT / "schemas" / "bom.schema.json").read_text())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_bom_json_golden_and_schema(path):
    code, out, _ = cli("bom", rel(path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    priced = [i for i in data["items"] if i["extended_price"] is not None]
    assert data["totals"]["capex_usd"] == pytest.approx(sum(i["extended_price"] for i in priced))
    assert data["totals"]["unpriced_lines"] == sum(1 for i in data["items"]
                                                   if i["extended_price"] is None and not i["included_in"])
    check_golden(f"bom/{path.stem}.json", out)


@pytest.mark.parametrize("fmt", ["text", "md", "csv"])
def test_bom_formats_golden(fmt):
    code, out, _ = cli("bom", "designs/superpod-h100-4su.yaml", "--format", fmt)
    assert code == 0
    check_golden(f"bom/superpod-h100-4su.{fmt}", out)


@pytest.mark.parametrize("row", [r for r in ROWS if r["family"] == "h100-table4"], ids=lambda r: f"{r['su']}SU")
def test_superpod_bom_counts(row):
    """The BOM of each DGX H100 SuperPOD Table 4 row has its switches and cables (RA-11333-001 Table 4)."""
    topo = topology_of(_design(row))
    bom = build_bom(topo)
    compute = [i for i in bom.items if i.fabric == "compute"]
    switches = {i.installed_in: i.qty - i.spares for i in compute if i.category == "switch"}
    assert switches == {"leaf": int(row["leaf"]), "spine": int(row["spine"])}
    cables = sum(i.qty - i.spares for i in compute if i.category == "cable")
    assert cables == int(row["node_leaf"]) + int(row["leaf_spine"])
    # a twin-port module serves two leaf ports: modules = sum over leaves of ceil(ports used / 2)
    from collections import Counter

    used = Counter(run.link.z_device for run in Plan(topo).runs("compute") if run.link.z_role == "leaf")
    used.update(run.link.a_device for run in Plan(topo).runs("compute") if run.link.a_role == "leaf")
    leaf_modules = sum(i.qty - i.spares for i in compute if i.category == "transceiver" and i.installed_in == "leaf")
    assert leaf_modules == sum((n + 1) // 2 for n in used.values())


def test_cabling_plan_one_row_per_link_no_duplicates():
    topo = load_topology(DESIGNS / "superpod-h100-4su.yaml")
    plan = Plan(topo)
    rows = [dict(zip(CABLING_COLUMNS, row, strict=True)) for row in plan.rows()]
    assert len(rows) == plan.tally.links
    assert rows == [dict(zip(CABLING_COLUMNS, plan.row(run), strict=True)) for run in plan.all_runs()]
    ends = set()
    for row in rows:
        a, z = (row["fabric"], row["a_device"], row["a_port"]), (row["fabric"], row["z_device"], row["z_port"])
        assert a not in ends and z not in ends, f"port used twice: {row}"
        ends.update((a, z))
    pairs = {(row["a_device"], row["z_device"]) for row in rows}
    assert not any((z, a) in pairs for a, z in pairs), "a Z-to-A duplicate row"


def test_cabling_csv_golden_and_columns():
    code, out, _ = cli("cabling", "designs/inference-h200-llama3-70b.yaml")
    assert code == 0
    reader = list(csv.DictReader(io.StringIO(out)))
    assert reader[0]["fabric"] == "compute" and reader[0]["a_device"] == "node00001"
    assert all(r["cable"] != "UNRESOLVED" for r in reader)
    check_golden("cabling/inference-h200-llama3-70b.csv", out)


def test_copper_only_inside_a_rack():
    plan = Plan(load_topology(DESIGNS / "roce-h100-2tier.yaml"))
    for run in plan.all_runs():
        if run.media.kind in ("dac", "acc"):
            assert run.a.rack == run.z.rack
        assert run.media.reach_m >= run.run_m


def test_workbook_reads_back_with_formulas(tmp_path):
    from openpyxl import load_workbook

    out = tmp_path / "sp.xlsx"
    code, _, _ = cli("bom", "designs/superpod-h100-4su.yaml", "--format", "xlsx", "-o", str(out),
                     "--timestamp", "2026-12-01T00:00:00")
    assert code == 0
    wb = load_workbook(out)
    assert wb.sheetnames == ["Summary", "BOM", "Sources", "Power & Cooling", "Findings"]
    bom = wb["BOM"]
    assert [c.value for c in bom[1]][:4] == ["category", "part", "description", "qty"]
    assert bom.freeze_panes == "A2" and bom.auto_filter.ref.startswith("A1:M")
    server = next(r for r in bom.iter_rows(min_row=2) if r[0].value == "server")
    n = server[0].row
    assert server[8].value == f'=IF(H{n}="","",D{n}*H{n})'
    assert server[7].number_format == '[<1000]"$"#,##0.00;"$"#,##0'      # cents on small values
    total = next(r for r in bom.iter_rows(min_row=2) if r[0].value == "total")
    assert total[8].value.startswith("=SUM(I")
    sources = wb["Sources"]                         # row for row with the BOM sheet
    assert [r[0].value for r in sources.iter_rows(min_row=2)] == [r[1].value for r in bom.iter_rows(min_row=2)
                                                                   if r[0].value and r[1].value][:sources.max_row - 1]
    cabling_book = tmp_path / "cabling.xlsx"
    assert cli("cabling", "designs/superpod-h100-4su.yaml", "--format", "xlsx", "-o", str(cabling_book),
               "--timestamp", "2026-12-01T00:00:00")[0] == 0
    cabling_wb = load_workbook(cabling_book)        # ~2000 rows: read once
    assert cabling_wb.sheetnames == ["Summary", "Cabling"]
    cabling = cabling_wb["Cabling"]
    derived = Derived(load_topology(DESIGNS / "superpod-h100-4su.yaml"))
    assert cabling.max_row == 1 + sum(s.links for s in derived.summaries.values())
    summary = {r[0].value: r[1].value for r in wb["Summary"].iter_rows(min_row=2)}
    assert summary["design"] == "superpod-h100-4su" and summary["generated"] == "2026-12-01T00:00:00Z"
    assert summary["catalog"] and len(summary["design sha256"]) == 64
    power = {r[0].value: r[1].value for r in wb["Power & Cooling"].iter_rows(min_row=2)}
    assert power["facility power"] == '=IF(ISNUMBER(B12),B12*B13,"unknown")'


def test_workbook_is_byte_identical(tmp_path):
    a, b = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    for out in (a, b):
        cli("bom", "designs/inference-h200-llama3-70b.yaml", "-f", "xlsx", "-o", str(out), "--timestamp", "2026-01-01")
    assert a.read_bytes() == b.read_bytes()


def test_xlsx_to_stdout_is_refused():
    code, _, err = cli("bom", "designs/inference-h200-llama3-70b.yaml", "-f", "xlsx")
    assert code == 2 and "-o FILE" in err
