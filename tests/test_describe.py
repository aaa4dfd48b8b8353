"""`describe` on every example design: golden JSON, its documented shape, and key counts."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tests.helpers import DESIGNS, ROOT, check_golden, cli, rel

EXAMPLES = sorted(DESIGNS.glob("*.yaml"))
SCHEMA = json.loads((ROOT / "schemas" / "describe.schema.json").read_text())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_describe_json_golden_and_schema(path):
    code, out, _ = cli("describe", rel(path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    check_golden(f"describe/{path.stem}.json", out)


def test_describe_counts_superpod():
    _, out, _ = cli("describe", "designs/superpod-h100-4su.yaml", "--format", "json")
    data = json.loads(out)
    assert (data["gpus"], data["servers"], data["racks"]["gpu"]) == (1016, 127, 32)
    tiers = {t["role"]: (t["switch"], t["count"]) for t in data["fabrics"]["compute"]["tiers"]}
    assert tiers == {"leaf": ("qm9700", 32), "spine": ("qm9700", 16)}
    assert data["fabrics"]["compute"]["links"] == 1020 + 1024
    assert data["nvlink_domains"] == {"count": 127, "gpus_per_domain": 8, "racks_per_domain": 1}


def test_describe_counts_nvl72():
    _, out, _ = cli("describe", "designs/gb200-nvl72-mixtral.yaml", "--format", "json")
    data = json.loads(out)
    assert data["gpus"] == 576 and data["racks"]["gpu"] == 8
    assert data["nvlink_domains"] == {"count": 8, "gpus_per_domain": 72, "racks_per_domain": 1}
    # one SU of the GB200 RA: 4 rails, a leaf per rack per rail (8 per rail group), 32 leaves
    compute = data["fabrics"]["compute"]
    assert (compute["rails"], compute["leaves_per_rail"], compute["scalable_units"]) == (4, 8, 1)
    assert compute["tiers"][0]["count"] == 4 * 8


def test_describe_text_is_readable():
    code, out, _ = cli("describe", "designs/roce-h100-2tier.yaml")
    assert code == 0
    assert "2,048 x h100-sxm in 256 x dgx-h100" in out
    assert "32 x sonic-th5-64x800" in out
