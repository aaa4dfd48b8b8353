"""Every example design's capex lines for servers and switches, its compute-fabric optics, and (inference)
its tokens/s, against arithmetic written out here (issue 26; tests/test_hand_checks_designs.py holds the
structure, power, per-GPU bandwidth and MFU or KV figures, tests/test_hand_checks.py the full capex of the
disaggregated fleet, cables, racks, PDUs and rear doors included).

Prices: the built-in street book, validator/resolve/catalog/data/prices/street.yaml (each with its source
and basis there): DGX H100 $270,000 (SemiAnalysis), DGX H200 $312,667 (an HGX H200 listing, proxy),
DGX B300 $590,000 (derived: 8 x $45,000 x 1.64), GB200 NVL72 tray $172,000 (derived: ~$3.1M rack / 18);
Tomahawk 5 white box $45,000 (derived), SN5600 $55,000 (proxy), QM9700 $36,000 (proxy: the FS archived
64 x 400G NDR listing, as QM9790), SN4600C and
SN4600C-200 $22,000 (proxy: SN4700), SN2201 $4,200 (proxy); twin-port 2 x 400G SR8 modules $879 finned
(mma4z00-ns), $1,249 flat-top (mma4z00-ns-flt). The GB200 NVL36x2 tray has no price: no server line.
Spares: 2 % per module line, rounded up (validator/data/defaults.yaml bom.spares_pct_transceiver).
"""

from __future__ import annotations

import pytest

from tests.test_hand_checks_designs import REL, _json, _links, _optics, _spares

DGX_H100, DGX_H200, DGX_B300, NVL72_TRAY = 270_000, 312_667, 590_000, 172_000
TH5, SN5600, QM9700, SN4600C, SN2201 = 45_000, 55_000, 36_000, 22_000, 4_200
SR8, SR8_FLAT = 879, 1_249

# design -> (servers line, switches line), USD
CAPEX = {
    # 128 DGX B300; 32 + 16 SN5600 (two planes), 4 SN2201 + 1 SN4600C out of band
    "b300-spectrum-x-dual-plane": (128 * DGX_B300, 48 * SN5600 + 4 * SN2201 + SN4600C),
    # 72 unpriced trays; 8 + 3 Tomahawk 5, 2 SN2201 + 1 SN4600C
    "gb200-nvl36x2-inference": (None, 11 * TH5 + 2 * SN2201 + SN4600C),
    # 144 trays; compute 32 + 9 and storage 10 + 8 QM9700; 20 SN2201 + 1 SN4600C
    "gb200-nvl72-mixtral": (144 * NVL72_TRAY, 59 * QM9700 + 20 * SN2201 + SN4600C),
    # 13 DGX H100; 8 rail leaves + 1 spine; 1 SN2201
    "inference-deepseek-v3-pd-h100": (13 * DGX_H100, 9 * TH5 + SN2201),
    # 24 DGX H100; 6 leaves + 2 spines; 1 SN2201
    "inference-disaggregated-h100": (24 * DGX_H100, 8 * TH5 + SN2201),
    # 16 DGX H100; no compute fabric: an SN4600C-200 in band and an SN2201 out of band
    "inference-h100-no-backend": (16 * DGX_H100, SN4600C + SN2201),
    # 16 DGX H200; one Tomahawk 5 leaf, an SN4600C-200 in band, an SN2201
    "inference-h200-llama3-70b": (16 * DGX_H200, TH5 + SN4600C + SN2201),
    # 128 DGX H100; 8 rail switches; 3 SN2201 + 1 SN4600C
    "rail-only-h100": (128 * DGX_H100, 8 * TH5 + 3 * SN2201 + SN4600C),
    # 256 DGX H100; compute 32 + 16 and storage 5 + 4 Tomahawk 5; in band 16 + 8 SN4600C-200; 9 SN2201 + SN4600C
    "roce-h100-2tier": (256 * DGX_H100, 57 * TH5 + 24 * SN4600C + 9 * SN2201 + SN4600C),
    # 127 DGX H100; compute 32 + 16 and storage 5 + 4 QM9700; in band 8 + 4 SN4600C-200; 5 SN2201 + SN4600C
    "superpod-h100-4su": (127 * DGX_H100, 57 * QM9700 + 12 * SN4600C + 5 * SN2201 + SN4600C),
}


@pytest.mark.parametrize("design", sorted(CAPEX))
def test_capex_of_servers_and_switches(design):
    servers, switches = CAPEX[design]
    totals = _json("bom", design)["totals"]
    by_category = totals["capex_by_category_usd"]
    assert by_category.get("server") == servers
    assert by_category["switch"] == switches
    if totals["capex_usd"] is not None:
        assert totals["capex_usd"] == pytest.approx(sum(by_category.values()))


def test_capex_of_compute_optics():
    """Twin-port SR8 modules, finned in switches and flat-top in the DGX cages (counts below)."""
    # rail-only: 512 flat-top in the servers' 4 cages each, 512 finned in the rail switches, 11 spares each
    assert _json("bom", "rail-only-h100")["totals"]["capex_by_category_usd"]["transceiver"] == \
        (512 + 11) * (SR8 + SR8_FLAT)                                                      # $1,112,944
    # one leaf: 64 + 2 of each
    assert _json("bom", "inference-h200-llama3-70b")["totals"]["capex_by_category_usd"]["transceiver"] == \
        (64 + 2) * (SR8 + SR8_FLAT)                                                        # $140,448
    # DeepSeek: 115 leaf + 54 spine finned, 54 flat-top (below)
    assert _json("bom", "inference-deepseek-v3-pd-h100")["totals"]["capex_by_category_usd"]["transceiver"] == \
        (115 + 54) * SR8 + 54 * SR8_FLAT                                                   # $215,997


def test_compute_optics_of_the_remaining_designs():
    """One module per cage (issue 25): a twin-port cage takes one 2 x 400G module whether it carries one link
    or two; 2 % spares per line (b300, rail-only, NVL36x2 and H200: tests/test_hand_checks_designs.py)."""
    # 256 DGX H100 x 4 cages = 1,024 flat-top; leaves 2,048 down + 2,048 up links = 2,048 modules; spines
    # 2,048 links = 1,024
    assert _optics("roce-h100-2tier") == (1024 + _spares(1024)) + (2048 + _spares(2048)) + (1024 + _spares(1024))
    # 127 DGX H100 x 4 = 508 flat-top; 32 leaves x (16 down + 16 up cages) = 1,024 (the 4 leaves of the last
    # SU carry 31 servers' links, an odd count, still 16 cages); 1,024 leaf-spine links on the 16 spines = 512;
    # the UFM's 4 single-port modules
    d = _json("describe", "superpod-h100-4su")
    assert _links(d)[("leaf", "spine")] == 32 * 32
    assert _optics("superpod-h100-4su") == (508 + _spares(508)) + (1024 + _spares(1024)) + (512 + _spares(512)) \
        + (4 + _spares(4))                                                                 # 2,092
    # 13 DGX H100 x 4 = 52 flat-top; 8 rail leaves with 13 links down and 13 up: 7 + 7 cages each = 112; one
    # spine with 104 links = 52
    assert _optics("inference-deepseek-v3-pd-h100") == (52 + _spares(52)) + (8 * 14 + _spares(112)) \
        + (52 + _spares(52))                                                               # 223
    # 24 DGX H100 x 4 = 96 flat-top; 6 leaves x (16 + 16) = 192; 192 links on 2 spines = 96
    assert _optics("inference-disaggregated-h100") == (96 + _spares(96)) + (192 + _spares(192)) \
        + (96 + _spares(96))                                                               # 392
    # 144 trays x 4 single-port 400G flat-top = 576; 576 down + 576 up leaf links = 576 twin-port; 576 on the
    # 9 spines = 288
    assert _optics("gb200-nvl72-mixtral") == (576 + _spares(576)) * 2 + (288 + _spares(288))  # 1,470
    assert _optics("inference-h100-no-backend") == 0                                        # no compute fabric


# aggregated fleets: (GPUs per replica, prompt tokens, output tokens) as the designs state them
SERVING = {"gb200-nvl36x2-inference": (8, 2048, 512), "inference-h100-no-backend": (8, 2048, 512),
           "inference-h200-llama3-70b": (4, 2048, 512)}


@pytest.mark.parametrize("design", sorted(SERVING))
def test_tokens_per_s_follow_from_the_request_rate(design):
    """A replica at full load serves requests/s x output tokens; per GPU, over the replica's GPUs; input +
    output over output only, (2,048 + 512) / 512 = 5 times as many tokens."""
    gpus, prompt, output = SERVING[design]
    est = _json("estimate", design)
    per_replica = est["requests_per_s_per_replica"] * output
    assert est["output_tokens_per_s_per_replica"] == pytest.approx(per_replica, rel=2 * REL)
    assert est["output_tokens_per_s_per_gpu"] == pytest.approx(per_replica / gpus, rel=2 * REL)
    assert est["total_tokens_per_s_per_gpu"] == pytest.approx(per_replica / gpus * (prompt + output) / output,
                                                              rel=3 * REL)
    # the planned fleet never carries more than every replica at full load
    assert est["fleet_capacity_qps"] <= est["replicas_planned"] * est["requests_per_s_per_replica"] * (1 + REL)


def test_every_example_design_has_its_capex_checked():
    from tests.helpers import DESIGNS

    assert sorted(p.stem for p in DESIGNS.glob("*.yaml")) == sorted(CAPEX)
