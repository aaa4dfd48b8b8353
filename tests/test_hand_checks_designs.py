"""Every example design's headline figures against arithmetic written out here from catalog figures
(issue 26): GPUs, switches per tier and the links they carry, IT power, per-GPU network bandwidth, and
MFU (training: model FLOPs per token x tokens/s over the peak) or the KV-cache closed forms (inference).
Capex of servers and switches, compute optics and serving tokens/s of every design:
tests/test_hand_checks_designs_bom.py; tests/test_hand_checks.py holds the deeper checks (full capex, BOM
power, memory) of two of them.

Catalog figures used (validator/resolve/catalog/data/, each with its source there):
- servers, max power and compute links: DGX H100 / H200 10,200 W, 8 x 400G; DGX B300 14,500 W, 8 x
  ConnectX-8 800G ports, each run as 2 x 400GbE; GB200 NVL72 tray 6,667 W and NVL36x2 tray 7,333 W,
  4 GPUs and 4 x 400G each;
- switches: Tomahawk 5 white box (sonic-th5-64x800) and SN5600, 64 x 800G = 128 x 400G ports, 2,218 W
  max (SN5600: 940 W typical, no max published); QM9700 32 OSFP = 64 x NDR 400G, 1,720 W max; SN4600C
  and SN4600C-200 64 ports, 466 W typical; SN2201 98 W typical (a typical figure stands in where no
  maximum is published);
- GPUs: H100 989 TFLOPS bf16 dense, 80 GB; H200 141 GB; B300 4,500 TFLOPS fp8 dense; GB200 2,500
  TFLOPS bf16 dense, 186 GB;
- models (config.json): Llama 3 70B (h 8192, 64 heads x 128, 8 KV heads, FFN 28,672, 80 layers, vocab
  128,256), Llama 3.1 405B (h 16,384, 128 heads, 8 KV heads, FFN 53,248, 126 layers), Mixtral 8x7B
  (h 4096, 32 heads, 8 KV heads, 8 experts of FFN 14,336, top-2, 32 layers, vocab 32,000), DeepSeek-V3
  (61 layers, MLA latent 512 + RoPE key 64).
Serving defaults: gpu_memory_utilization 0.9 (vLLM), 3.5 GB reserve (thresholds.yaml), 16-token blocks.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers import cli

REL = 1e-3   # outputs carry four significant digits


def _json(command: str, design: str) -> dict:
    code, out, err = cli(command, f"designs/{design}.yaml", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _tiers(describe: dict, fabric: str = "compute") -> dict[str, int]:
    return {t["role"]: t["count"] for t in describe["fabrics"][fabric]["tiers"]}


def _links(describe: dict, fabric: str = "compute") -> dict[tuple[str, str], int]:
    return {(g["from"], g["to"]): g["count"] for g in describe["fabrics"][fabric]["link_groups"]}


def _llama3_70b_flops_per_token(seq: int) -> float:
    """3 x forward FLOPs (causal attention): 80 x 855,638,016 layer matmul parameters + the LM head."""
    h, kv, ffn, layers, vocab = 8192, 8 * 128, 28672, 80, 128256
    matmul = 2 * (layers * (2 * h * h + 2 * h * kv + 3 * h * ffn) + h * vocab)
    return 3 * (matmul + 2 * 2 * seq * h * layers / 2)


def _mixtral_flops_per_token(seq: int) -> float:
    """Active parameters per token: attention 2 h^2 + 2 h x 1024, two experts of 3 h x 14,336 and the
    router h x 8, per layer: 394,297,344 x 32 layers + the LM head 4096 x 32,000."""
    h, kv, ffn, layers, vocab = 4096, 8 * 128, 14336, 32, 32000
    layer = 2 * h * h + 2 * h * kv + 2 * 3 * h * ffn + h * 8
    return 3 * (2 * (layers * layer + h * vocab) + 2 * 2 * seq * h * layers / 2)


LLAMA3_70B_PARAMS = 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) + 2 * 8192 * 128256  # 70,552,387,584
LLAMA3_70B_KV = 80 * 2 * 8 * 128                     # bytes per token at 1 byte (fp8): 163,840


def _max_concurrency(hbm_gb: float, weights_gb: float, kv_per_token_per_gpu: float, context: int) -> int:
    """vLLM: (HBM x 0.9 - weights - 3.5 GB reserve) in 16-token blocks, over the blocks of one context."""
    blocks = math.floor((hbm_gb * 0.9 - weights_gb - 3.5) * 1e9 / (kv_per_token_per_gpu * 16))
    return blocks // (context // 16)


def _spares(n: int) -> int:
    """2 % on-site spares per optics line, rounded up (validator/data/defaults.yaml bom.spares_pct_transceiver)."""
    return math.ceil(n * 2 / 100)


def _optics(design: str, fabric: str = "compute") -> int:
    """Transceivers of one fabric on the BOM, spares included."""
    items = _json("bom", design)["items"]
    return sum(i["qty"] for i in items if i["category"] == "transceiver" and i["fabric"] == fabric)


def _training_mfu(design: str, flops_per_token: float, peak_tflops: float) -> None:
    est = _json("estimate", design)
    model_tflops = flops_per_token * est["tokens_per_s_per_gpu"] / 1e12
    assert est["model_tflops_per_gpu"] == pytest.approx(model_tflops, rel=2 * REL)
    assert est["mfu"] == pytest.approx(model_tflops / peak_tflops, rel=2 * REL)
    assert est["assumptions"]["peak_tflops"] == peak_tflops


# ---------------------------------------------------------------------------------------------- training

def test_b300_dual_plane_structure_and_power():
    d = _json("describe", "b300-spectrum-x-dual-plane")
    assert d["gpus"] == 128 * 8 == 1024
    # 8 ConnectX-8 800G ports per server, each as 2 x 400GbE, one 400G link into each plane:
    # 128 x 16 = 2,048 links, 1,024 per plane
    assert _links(d)[("server", "leaf")] == 128 * 8 * 2 == 2048
    # per plane: 1,024 links / 64 down ports of a 128 x 400G leaf at 1:1 = 16 leaves, 1,024 uplinks /
    # 128 spine ports = 8 spines; two planes
    assert _tiers(d) == {"leaf": 2 * 1024 // 64, "spine": 2 * 1024 // 128} == {"leaf": 32, "spine": 16}
    assert _links(d)[("leaf", "spine")] == 2048
    # 128 x 14.5 kW; 48 SN5600 at 940 W typical + 4 SN2201 (98 W) + 1 SN4600C (466 W) out of band
    assert d["it_power_kw"]["servers"] == pytest.approx(128 * 14.5)                       # 1,856 kW
    assert d["it_power_kw"]["switches"] == pytest.approx((48 * 940 + 4 * 98 + 466) / 1000)  # 45.978 kW


def test_b300_dual_plane_bandwidth_per_gpu_is_800():
    # 16 links x 400 Gb/s (two planes) / 8 GPUs = 800 Gb/s per GPU, as TRN006 and the serving model count it
    est = _json("estimate", "b300-spectrum-x-dual-plane")
    assert est["assumptions"]["fabric_gbps_per_gpu"] == 16 * 400 / 8


def test_b300_dual_plane_optics():
    # server side: one module per ConnectX-8 cage, and the cage carries both planes' 400G links (1,024 NICs,
    # one OSFP cage each: 1,024 flat twin-port modules, issue 25: never two modules in one cage); leaves:
    # 2,048 links down and 2,048 up on twin-port modules (2 links each, 2,048 modules); spines: 2,048 links
    # down on 1,024 twin-port modules
    assert _optics("b300-spectrum-x-dual-plane") == (1024 + _spares(1024)) + (2048 + _spares(2048)) \
        + (1024 + _spares(1024))                                                            # 4,179


def test_b300_dual_plane_mfu():
    # fp8 training: the B300's 4,500 TFLOPS dense fp8 is the peak
    _training_mfu("b300-spectrum-x-dual-plane", _llama3_70b_flops_per_token(8192), 4500)


def test_gb200_nvl72_mixtral_structure_power_and_mfu():
    d = _json("describe", "gb200-nvl72-mixtral")
    assert d["gpus"] == 144 * 4 == 576
    # 4 x 400G per tray: 576 links; the leaves take 18 downlinks each (declared) -> 576 / 18 = 32 leaves,
    # 18 up at 1:1 -> 576 uplinks / 64 QM9700 ports = 9 spines
    assert _links(d)[("server", "leaf")] == 144 * 4
    assert _tiers(d) == {"leaf": 576 // 18, "spine": 576 // 64} == {"leaf": 32, "spine": 9}
    assert d["it_power_kw"]["servers"] == pytest.approx(144 * 6.667)                       # 960.048 kW
    # compute 32 + 9 and storage 10 + 8 QM9700 at 1,720 W; out of band 20 SN2201 (98 W) + an SN4600C
    assert d["it_power_kw"]["switches"] == pytest.approx(((32 + 9 + 10 + 8) * 1720 + 20 * 98 + 466) / 1000)
    est = _json("estimate", "gb200-nvl72-mixtral")
    assert est["assumptions"]["fabric_gbps_per_gpu"] == 4 * 400 / 4                        # 400 Gb/s
    _training_mfu("gb200-nvl72-mixtral", _mixtral_flops_per_token(4096), 2500)             # bf16 peak


def test_rail_only_h100_structure_power_and_mfu():
    d = _json("describe", "rail-only-h100")
    assert d["gpus"] == 128 * 8 == 1024
    # one switch per rail: rail i of all 128 servers on one 128 x 400G Tomahawk 5, 8 rails
    assert _tiers(d) == {"leaf": 8}
    assert _links(d) == {("server", "leaf"): 128 * 8}
    assert d["it_power_kw"]["servers"] == pytest.approx(128 * 10.2)                        # 1,305.6 kW
    # 8 rail switches at 2,218 W + 3 SN2201 and an SN4600C out of band
    assert d["it_power_kw"]["switches"] == pytest.approx((8 * 2218 + 3 * 98 + 466) / 1000)  # 18.504 kW
    est = _json("estimate", "rail-only-h100")
    assert est["assumptions"]["fabric_gbps_per_gpu"] == 8 * 400 / 8
    # 1,024 links on twin-port modules at both ends: 4 OSFP cages per DGX (512 flat-top modules) and 512
    # finned modules on the rail switches, 2 % spares each
    assert _optics("rail-only-h100") == 2 * (512 + _spares(512))                           # 1,046
    _training_mfu("rail-only-h100", _llama3_70b_flops_per_token(8192), 989)


def test_roce_h100_2tier_structure_and_power():
    d = _json("describe", "roce-h100-2tier")
    assert d["gpus"] == 256 * 8 == 2048
    # 2,048 links / 64 down ports = 32 leaves; 2,048 uplinks / 128 ports = 16 spines (4 full SUs of 64)
    assert _tiers(d) == {"leaf": 2048 // 64, "spine": 2048 // 128}
    assert d["it_power_kw"]["servers"] == pytest.approx(256 * 10.2)                        # 2,611.2 kW
    # compute 48 + storage 9 Tomahawk 5 at 2,218 W; in-band 24 SN4600C-200 at 466 W; out of band 9 SN2201
    # and an SN4600C
    switches = (48 + 9) * 2218 + 24 * 466 + 9 * 98 + 466
    assert d["it_power_kw"]["switches"] == pytest.approx(switches / 1000)                   # 138.958 kW
    est = _json("estimate", "roce-h100-2tier")
    assert est["assumptions"]["fabric_gbps_per_gpu"] == 8 * 400 / 8
    _training_mfu("roce-h100-2tier", _llama3_70b_flops_per_token(8192), 989)              # bf16 peak


def test_roce_h100_2tier_storage_uplinks_equal_used_downlinks():
    d = _json("describe", "roce-h100-2tier")
    # 256 servers x 2 storage links + 32 storage nodes x 2 ports = 576 links down at 1:1 -> 576 up
    links = _links(d, "storage")
    assert links[("server", "leaf")] + links[("storage", "leaf")] == 256 * 2 + 32 * 2 == 576
    assert links[("leaf", "spine")] == 576


def test_superpod_h100_4su_structure_and_power():
    d = _json("describe", "superpod-h100-4su")
    assert d["gpus"] == 127 * 8 == 1016
    # DGX SuperPOD RA 4 SU: 32 leaves (8 rails x 4 SUs) and 16 spines; the UFM's 4 ports fill the slot of
    # the 128th server
    assert _tiers(d) == {"leaf": 8 * 4, "spine": 16}
    assert _links(d)[("server", "leaf")] + _links(d)[("ufm", "leaf")] == 127 * 8 + 4 == 1020
    assert d["it_power_kw"]["servers"] == pytest.approx(127 * 10.2)                        # 1,295.4 kW
    # compute 48 + storage 9 QM9700 at 1,720 W; in-band 12 SN4600C-200; out of band 5 SN2201 + SN4600C
    switches = (48 + 9) * 1720 + 12 * 466 + 5 * 98 + 466
    assert d["it_power_kw"]["switches"] == pytest.approx(switches / 1000)                   # 104.588 kW
    est = _json("estimate", "superpod-h100-4su")
    assert est["assumptions"]["fabric_gbps_per_gpu"] == 8 * 400 / 8                       # 8 x NDR per DGX
    _training_mfu("superpod-h100-4su", _llama3_70b_flops_per_token(8192), 989)


# --------------------------------------------------------------------------------------------- inference

def test_gb200_nvl36x2_inference():
    d = _json("describe", "gb200-nvl36x2-inference")
    assert d["gpus"] == 72 * 4 == 288
    # one leaf per rack: 9 trays x 4 links = 36 down, 36 up; 288 uplinks / 128 ports -> 3 spines
    assert _tiers(d) == {"leaf": 72 // 9, "spine": math.ceil(288 / 128)} == {"leaf": 8, "spine": 3}
    assert d["it_power_kw"]["servers"] == pytest.approx(72 * 7.333)                        # 527.976 kW
    assert d["it_power_kw"]["switches"] == pytest.approx((11 * 2218 + 2 * 98 + 466) / 1000)  # 25.06 kW
    est = _json("estimate", "gb200-nvl36x2-inference")
    assert est["assumptions"]["rdma_gbps_per_gpu"] == 4 * 400 / 4
    # trays reach their in-rack leaf over copper; the 288 leaf-spine links take twin-port modules at both
    # ends: 144 on the leaves and 144 on the spines, 2 % spares each
    assert _optics("gb200-nvl36x2-inference") == 2 * (144 + _spares(144))                  # 294
    # Llama 3.1 405B: 126 x (2 x 16,384^2 + 2 x 16,384 x 1,024 + 3 x 16,384 x 53,248) + 2 x 16,384 x 128,256
    params = 126 * (2 * 16384**2 + 2 * 16384 * 1024 + 3 * 16384 * 53248) + 2 * 16384 * 128256
    weights = params * 1 / 8 / 1e9                                                  # fp8 over TP 8: 50.73 GB
    assert est["weights_gb_per_gpu"] == pytest.approx(weights, rel=REL)
    kv = 126 * 2 * 8 * 128 * 1                                                      # fp8: 258,048 B/token
    assert est["kv_bytes_per_token"] == kv
    assert est["max_concurrency_per_replica"] == _max_concurrency(186, weights, kv / 8, 8192)
    assert est["replicas_planned"] == 36


def test_deepseek_v3_pd_h100():
    d = _json("describe", "inference-deepseek-v3-pd-h100")
    assert d["gpus"] == 13 * 8 == 104
    assert _links(d)[("server", "leaf")] == 104
    assert d["it_power_kw"]["servers"] == pytest.approx(13 * 10.2)                         # 132.6 kW
    # 8 rail leaves + 1 spine, Tomahawk 5 at 2,218 W max; one SN2201 out of band at 98 W typical
    assert d["it_power_kw"]["switches"] == pytest.approx((9 * 2218 + 98) / 1000)            # 20.06 kW
    est = _json("estimate", "inference-deepseek-v3-pd-h100")
    assert est["assumptions"]["rdma_gbps_per_gpu"] == 8 * 400 / 8
    # MLA keeps one latent (512) and one RoPE key (64) per layer and token, bf16: 61 x 576 x 2 B
    assert est["kv_bytes_per_token"] == 61 * (512 + 64) * 2 == 70272


def test_deepseek_v3_pd_h100_uplinks_equal_used_downlinks():
    d = _json("describe", "inference-deepseek-v3-pd-h100")
    # 13 servers on one rail-optimized SU: one leaf per rail with 13 downlinks; at 1:1, 13 uplinks each
    assert _tiers(d)["leaf"] == 8
    assert _links(d)[("leaf", "spine")] == 8 * 13 == 104


def test_disaggregated_h100_structure():
    d = _json("describe", "inference-disaggregated-h100")
    assert d["gpus"] == 24 * 8 == 192
    # a leaf per rack of 4 servers: 32 down, 32 up; 192 uplinks / 128 ports -> 2 spines
    assert _tiers(d) == {"leaf": 24 // 4, "spine": math.ceil(192 / 128)}
    est = _json("estimate", "inference-disaggregated-h100")
    assert est["assumptions"]["rdma_gbps_per_gpu"] == 400


def test_h100_no_backend():
    d = _json("describe", "inference-h100-no-backend")
    assert d["gpus"] == 16 * 8 == 128
    assert "compute" not in d["fabrics"]
    assert d["it_power_kw"] == pytest.approx({"servers": 16 * 10.2, "switches": (466 + 98) / 1000,
                                              "total": 16 * 10.2 + (466 + 98) / 1000})
    est = _json("estimate", "inference-h100-no-backend")
    assert est["assumptions"]["rdma_gbps_per_gpu"] == 0          # no compute fabric: TP 8 stays on NVLink
    weights = LLAMA3_70B_PARAMS / 8 / 1e9                        # fp8 over TP 8: 8.819 GB
    assert est["weights_gb_per_gpu"] == pytest.approx(weights, rel=REL)
    assert est["kv_bytes_per_token"] == LLAMA3_70B_KV
    assert est["max_concurrency_per_replica"] == _max_concurrency(80, weights, LLAMA3_70B_KV / 8, 8192)
    assert est["replicas_planned"] == 16


def test_h200_llama3_70b():
    d = _json("describe", "inference-h200-llama3-70b")
    assert d["gpus"] == 16 * 8 == 128
    # 128 links at 400G fill one 128 x 400G Tomahawk 5: no spine
    assert _tiers(d) == {"leaf": 1}
    assert d["it_power_kw"]["switches"] == pytest.approx((2218 + 466 + 98) / 1000)         # 2.782 kW
    est = _json("estimate", "inference-h200-llama3-70b")
    assert est["assumptions"]["rdma_gbps_per_gpu"] == 400
    # 128 links on twin-port modules at both ends: 64 flat-top in the DGX H200s' 4 OSFP cages each and 64
    # finned in the leaf, 2 % spares each
    assert _optics("inference-h200-llama3-70b") == 2 * (64 + _spares(64))                  # 132
    weights = LLAMA3_70B_PARAMS / 4 / 1e9                        # fp8 over TP 4: 17.64 GB
    assert est["weights_gb_per_gpu"] == pytest.approx(weights, rel=REL)
    assert est["max_concurrency_per_replica"] == _max_concurrency(141, weights, LLAMA3_70B_KV / 4, 8192)
    assert est["replicas_planned"] == 32                         # autoscaling.max


def test_every_example_design_has_a_hand_check():
    """A new design in designs/ gets its headline figures checked here too."""
    from pathlib import Path

    from tests.helpers import DESIGNS

    text = Path(__file__).read_text(encoding="utf-8")
    unchecked = [p.stem for p in sorted(DESIGNS.glob("*.yaml")) if f'"{p.stem}"' not in text]
    assert not unchecked, unchecked
