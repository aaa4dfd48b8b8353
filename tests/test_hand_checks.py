"""The numbers whose goldens are the code's own output (power, capex, estimates), each checked against a
figure computed here by hand from the source figures, the arithmetic written out.

Source figures: DGX H100 10,200 W max and a USD 199,000 base price (catalog, DGX H100 user guide and a
secondary price source); the Tomahawk 5 white box 2,218 W max (Arista 7060X6-64PE datasheet); SN2201
98 W typical (its hardware manual, no max published); OSFP twin-port SR8 module 15 W (LinkX
MMA4Z00-NS); H100 989 TFLOPS bf16 / 1,979 fp8 dense and 3.35 TB/s HBM3, H200 141 GB and 4.8 TB/s
(NVIDIA product pages); model shapes from the models' config.json (catalog); PUE and electricity
from each design, else validator/data/defaults.yaml (1.56, USD 0.08/kWh); 8,760 hours a year;
4-year amortization (the design's `costs.amortization_years`).

The estimator's own figures (step time, TTFT, TPOT) are checked against published runs in
tests/test_estimator.py; here they enter only as inputs of identities, or against a roofline bound.
"""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers import DESIGNS, cli

REL = 1e-3   # outputs carry four significant digits


def _json(*args: str) -> dict:
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_bom_power_of_the_disaggregated_fleet():
    power = _json("bom", "designs/inference-disaggregated-h100.yaml")["power"]
    # 24 DGX H100 in 6 racks of 4, at 10,200 W each
    assert power["servers_kw"] == pytest.approx(24 * 10.2)                         # 244.8 kW
    assert power["gpu_rack_kw"] == pytest.approx(4 * 10.2) and power["gpu_racks"] == 24 // 4
    # compute fabric: a fat-tree with a spine puts one leaf in each of the 6 racks (4 x 8 = 32 links down,
    # 32 up at 1:1); 6 x 32 = 192 uplinks / 128 ports = 2 spines; 8 switches x 2,218 W; one SN2201 at 98 W
    assert power["switches_kw"] == pytest.approx((8 * 2218 + 98) / 1000)            # 17.842 kW
    # servers reach their in-rack leaf over DAC; the 192 leaf-spine links take a twin-port module at each
    # end: 96 on the leaves + 96 on the spines = 192 modules x 15 W (spares are not powered)
    assert power["optics_kw"] == pytest.approx(192 * 15 / 1000)                      # 2.88 kW
    it_kw = 244.8 + 17.842 + 2.88                                                    # 265.522 kW
    assert power["it_kw"] == pytest.approx(it_kw)
    assert power["facility_kw"] == pytest.approx(it_kw * 1.4)                        # design PUE 1.4
    assert power["energy_mwh_per_year"] == pytest.approx(it_kw * 1.4 * 8760 / 1000)  # 3,256.36 MWh
    assert power["energy_cost_per_year_usd"] == pytest.approx(it_kw * 1.4 * 8760 * 0.08)   # USD 260,509


def test_describe_it_power_is_servers_and_switches():
    data = _json("describe", "designs/inference-disaggregated-h100.yaml")
    assert data["it_power_kw"] == pytest.approx({"servers": 24 * 10.2, "switches": (8 * 2218 + 98) / 1000,
                                                 "total": 24 * 10.2 + (8 * 2218 + 98) / 1000})


def test_bom_capex_with_and_without_price_overrides(tmp_path):
    totals = _json("bom", "designs/inference-disaggregated-h100.yaml")["totals"]
    # the only priced part of the catalog here is the server: 24 x USD 199,000
    assert totals["capex_usd"] == pytest.approx(24 * 199_000)                        # USD 4,776,000
    assert totals["capex_by_category_usd"] == pytest.approx({"server": 24 * 199_000})
    design = (DESIGNS / "inference-disaggregated-h100.yaml").read_text(encoding="utf-8")
    path = tmp_path / "priced.yaml"
    path.write_text(design + "costs:\n  prices_usd: {dgx-h100: 250000, sonic-th5-64x800: 30000, mma4z00-ns: 1000}\n",
                    encoding="utf-8")
    totals = _json("bom", str(path))["totals"]
    # 24 servers; 8 compute switches; 192 modules + 2% spares per tier: ceil(96 x 1.02) = 98 at the leaves
    # and 98 at the spines = 196 modules bought
    assert totals["capex_by_category_usd"] == pytest.approx(
        {"server": 24 * 250_000, "switch": 8 * 30_000, "transceiver": 196 * 1_000})
    assert totals["capex_usd"] == pytest.approx(24 * 250_000 + 8 * 30_000 + 196 * 1_000)   # USD 6,436,000


def _llama3_70b_training_flops_per_token(seq: int) -> float:
    """3 x forward matmul FLOPs with the full s^2 attention (the estimator's stated convention):
    h 8192, 64 heads x 128, 8 KV heads, SwiGLU FFN 28,672, 80 layers, vocabulary 128,256."""
    h, kv, ffn, layers, vocab = 8192, 8 * 128, 28672, 80, 128256
    per_layer = h * h + h * h + 2 * h * kv + 3 * h * ffn            # Q, O, K and V, gate/up/down: 855,638,016
    matmul = 2 * (layers * per_layer + h * vocab)                   # + the LM head: 139,003,428,864
    attention = 2 * 2 * seq * h * layers                            # QK^T and AV: 21,474,836,480 at s = 8192
    return 3 * (matmul + attention)                                 # 481,434,796,032


def test_training_estimate_of_the_roce_cluster():
    est = _json("estimate", "designs/roce-h100-2tier.yaml")
    gpus, batch, seq = 2048, 1024, 8192             # 256 DGX H100; TP 8 x PP 4 x DP 64 = 2048
    step = est["step_time_s"]
    assert est["tokens_per_s"] == pytest.approx(batch * seq / step, rel=REL)
    assert est["tokens_per_s_per_gpu"] == pytest.approx(batch * seq / step / gpus, rel=REL)
    assert est["time_to_train_days"] == pytest.approx(2.0e12 / (batch * seq / step) / 86400, rel=REL)
    model_tflops = _llama3_70b_training_flops_per_token(seq) * batch * seq / step / gpus / 1e12
    assert est["model_tflops_per_gpu"] == pytest.approx(model_tflops, rel=REL)   # ~458 TFLOPS
    assert est["mfu"] == pytest.approx(model_tflops / 989, rel=REL)             # of the 989 bf16 peak
    # hardware FLOPs include the model's (and any recomputation); both utilisations are of the same peak
    assert est["hardware_tflops_per_gpu"] >= est["model_tflops_per_gpu"]
    assert est["hfu"] == pytest.approx(est["hardware_tflops_per_gpu"] / 989, rel=REL)
    parts = est["breakdown"]
    assert est["bubble_fraction"] == pytest.approx(parts["bubble"] / step, rel=2 * REL)
    assert est["comm_share"] == pytest.approx(sum(parts[k] for k in ("tp", "pp", "dp", "ep", "cp")) / step,
                                              rel=2 * REL)
    assert est["microbatches_per_step"] == batch // (64 * 1)   # global batch / (DP x micro-batch)
    mem = est["memory_per_gpu_gb"]
    params = 70.55e9 / (8 * 4)                                  # per GPU after TP 8 x PP 4
    assert mem["weights_gb"] == pytest.approx(params * 2 / 1e9, rel=REL)         # bf16: 4.409 GB
    assert mem["gradients_gb"] == pytest.approx(params * 2 / 1e9, rel=REL)
    assert mem["optimizer_gb"] == pytest.approx(params * 12 / 64 / 1e9, rel=REL)  # ZeRO 1 over DP 64
    # Korthikanti et al. 2022, selective recompute + sequence parallelism: 34 s b h / t per layer, 80
    # layers, x (1 + (pp - 1) / (pp x vpp)) = 1.15 for interleaving; + 4 s b h / t x (1 + V / h)
    sbh_t = seq * 1 * 8192 / 8
    activations = 34 * sbh_t * 80 * (1 + 3 / 20) + 4 * sbh_t * (1 + 128256 / 8192)
    assert mem["activations_gb"] == pytest.approx(activations / 1e9, rel=REL)     # 26.80 GB
    assert mem["total_gb"] == pytest.approx((2 * params * 2 + params * 12 / 64 + activations) / 1e9 + 4, rel=REL)
    assert mem["hbm_gb"] == 80


def test_inference_estimate_of_the_disaggregated_fleet():
    est = _json("estimate", "designs/inference-disaggregated-h100.yaml")
    # Llama 3 70B, fp8 weights and KV cache, replicas of TP 8 on one DGX H100 (80 GB, 3.35 TB/s)
    kv_token = 80 * 2 * 8 * 128 * 1                       # layers x (K, V) x KV heads x head dim x 1 B
    assert est["kv_bytes_per_token"] == pytest.approx(kv_token, rel=REL)             # 163,840 B
    assert est["kv_bytes_per_token_per_gpu"] == kv_token / 8                         # one KV head per GPU
    weights = 70.55e9 * 1 / 8 / 1e9                                                  # 8.819 GB per GPU
    assert est["weights_gb_per_gpu"] == pytest.approx(weights, rel=REL)
    kv_gb = 80 * 0.9 - weights - 3.5                       # vLLM utilization 0.9, 3.5 GB reserve: 59.68
    assert est["kv_gb_per_gpu"] == pytest.approx(kv_gb, rel=REL)
    blocks = math.floor(kv_gb * 1e9 / (kv_token / 8 * 16))                           # 182,132 blocks of 16
    assert est["kv_tokens_per_replica"] == blocks * 16
    assert est["max_concurrency_per_replica"] == blocks // (8192 // 16)              # 355 at 8,192 tokens
    batch = min(355, 256)                                  # vLLM max_num_seqs 256
    assert est["batch"] == batch
    tpot_s = est["tpot_ms"] / 1e3
    assert est["output_tokens_per_s_per_gpu"] == pytest.approx(batch / tpot_s / 8, rel=REL)
    assert est["requests_per_s_per_replica"] == pytest.approx(batch / (512 * tpot_s), rel=REL)
    # targets: 20 requests/s and 2,000 in flight -> max(ceil(20 / 16.13), ceil(2000 / 355)) = 6 replicas
    assert est["replicas_needed"] == max(math.ceil(20 / (batch / (512 * tpot_s))), math.ceil(2000 / 355)) == 6
    assert est["replicas_planned"] == 16
    # KV of a 4,096-token prompt over one decode server's 8 x 400 Gb/s at 90% fabric efficiency
    assert est["kv_transfer_ms"] == pytest.approx(4096 * kv_token / (8 * 400 / 8 * 1e9 * 0.9) * 1e3, rel=REL)
    # a GPU-hour: USD 199,000 / 8 GPUs / (4 years x 8,760 h) + 10.2 kW / 8 x PUE 1.4 x USD 0.08/kWh
    gpu_hour = 199_000 / 8 / (4 * 8760) + 10.2 / 8 * 1.4 * 0.08                     # USD 0.8527
    per_gpu = batch / tpot_s / 8
    assert est["cost_per_million_tokens"] == pytest.approx(gpu_hour / (per_gpu * 3600 / 1e6), rel=2 * REL)
    # rooflines no estimate may beat: a decode step reads the weights and the batch's KV cache at least
    # once at 3.35 TB/s; the prefill of one prompt needs 2 x 70.55e9 x 4,096 FLOPs over 8 x 1,979 TFLOPS
    assert est["tpot_ms"] >= (weights * 1e9 + batch * 4096 * kv_token / 8) / 3.35e12 * 1e3     # 9.0 ms
    assert est["ttft_ms"] >= 2 * 70.55e9 * 4096 / (8 * 1979e12) * 1e3                         # 36.5 ms
