"""The BOM's human-facing outputs come from templates/bom/ and the one structured BOM (bom.json);
a design repository overrides or adds BOM templates by name, in the sandbox."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.helpers import DESIGNS, FIXTURES, cli, rel

DESIGN = rel(DESIGNS / "superpod-h100-4su.yaml")


def _bom_json() -> dict:
    code, out, _ = cli("bom", DESIGN, "--format", "json")
    assert code == 0
    return json.loads(out)


def test_procurement_csv_orders_every_separately_bought_line_with_its_spares():
    bom = _bom_json()
    code, out, _ = cli("bom", DESIGN, "--format", "procurement")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    bought = [i for i in bom["items"] if not i["included_in"]]
    assert [r["part"] for r in rows] == [i["part"] for i in bought]
    for row, item in zip(rows, bought, strict=True):
        # the BOM's qty already holds the spares (docs/bom.md): order exactly that, never qty + spares again
        assert int(row["order qty"]) == item["qty"] and int(row["of which spares"]) == item["spares"]
        assert (row["unit price (USD)"] == "") == (item["unit_price"] is None)
        assert ("unpriced" in row["note"]) == (item["unit_price"] is None)
    server = next(r for r in rows if r["part"] == "dgx-h100")
    assert float(server["extended price (USD)"]) == 127 * 270_000     # the built-in street price of a DGX H100
    assert server["vendor"] == "unknown"     # the catalog gives servers no vendor: said, not guessed
    assert next(r for r in rows if r["part"] == "qm9700")["vendor"] == "nvidia"


def test_one_request_for_quotation_per_vendor(tmp_path):
    bom = _bom_json()
    code, _, _ = cli("bom", DESIGN, "--format", "rfq", "-o", str(tmp_path))
    assert code == 0
    files = {p.name: p.read_text() for p in tmp_path.glob("rfq-*.md")}
    assert "rfq-nvidia.md" in files and len(files) >= 2
    parts = [i["part"] for i in bom["items"] if not i["included_in"]]
    for part in parts:    # every bought part is in exactly one request
        assert sum(f"| {part} |" in text for text in files.values()) == 1, part


def test_power_summary_carries_the_bom_figures():
    p = _bom_json()["power"]
    code, out, _ = cli("bom", DESIGN, "--format", "power")
    assert code == 0
    # the UFM appliance has no published power: facility power and air heat are unknown, never a smaller sum
    assert p["facility_kw"] is None and "| facility power | unknown kW |" in out
    assert "Power unknown (left out of the totals above): ufm." in out
    for cooling, kw in p["heat_kw_by_cooling"].items():
        assert f"| {cooling} | {'unknown' if kw is None else f'{kw:,.1f}'} |" in out


def _repo_with_templates(tmp_path, files: dict[str, str]):
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / "tpl" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tpl" / name).write_text(text)
    design = (FIXTURES / "valid" / "small-training.yaml").read_text()
    path = tmp_path / "d.yaml"
    path.write_text(design.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl"))
    return path


def test_a_repository_template_renders_from_the_same_data(tmp_path):
    quote = ("VENDOR QUOTE FORM {{ bom.name }}\n{% for i in bom['items'] if i.fabric == 'compute' %}"
             "{{ i.part }};{{ i.qty }}\n{% endfor %}")
    path = _repo_with_templates(tmp_path, {"bom/quote.j2": quote, "bom/bom.md.j2": "overridden {{ bom.name }}\n"})
    code, out, _ = cli("bom", str(path), "--template", "quote")
    assert code == 0
    _, data, _ = cli("bom", str(path), "--format", "json")
    expected = [f"{i['part']};{i['qty']}" for i in json.loads(data)["items"] if i["fabric"] == "compute"]
    assert expected and out.splitlines()[1:] == expected
    code, out, _ = cli("bom", str(path), "--format", "md")
    assert code == 0 and out == f"overridden {json.loads(data)['name']}\n"


@pytest.mark.parametrize("template", ["{{ ''.__class__.__mro__[1].__subclasses__() }}", "{{ no_such_fact }}"])
def test_repository_bom_templates_are_sandboxed_and_strict(tmp_path, template):
    path = _repo_with_templates(tmp_path, {"bom/quote.j2": template})
    code, _, err = cli("bom", str(path), "--template", "quote")
    assert code == 1 and "template bom/quote.j2" in err
