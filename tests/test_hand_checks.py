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
    # the heaviest GPU rack: 4 servers, their top-of-rack leaf (2,218 W, a maximum that includes its modules:
    # (2,218 - 640) W / 64 ports = 24.7 W a port, more than a 15 W twin-port module, so the 32 modules in its
    # cages add nothing) and the servers' twin-port modules, 4 cages per DGX H100 x 4 servers x 15 W. No DAC:
    # the DGX's OSFP cages are flat-top, the leaf's finned, and the catalog has no flat-to-finned DAC
    assert power["gpu_rack_kw"] == pytest.approx(4 * 10.2 + 2.218 + 4 * 4 * 0.015, abs=1e-3)
    assert power["gpu_racks"] == 24 // 4
    # compute fabric: a fat-tree with a spine puts one leaf in each of the 6 racks (4 x 8 = 32 links down,
    # 32 up at 1:1); 6 x 32 = 192 uplinks / 128 ports = 2 spines; 8 switches x 2,218 W maximum; one SN2201
    # at its 98 W typical (no maximum published)
    assert power["switches_kw"] == pytest.approx((8 * 2218 + 98) / 1000)            # 17.842 kW
    assert power["typical_parts"] == ["sn2201"]
    # one twin-port module per cage (spares are not powered): the 192 + 96 in Tomahawk 5 leaves and spines are
    # in their maximum (0 W added); the servers' 24 x 4 cages = 96 modules x 15 W
    assert power["optics_kw"] == pytest.approx(96 * 15 / 1000)                       # 1.44 kW
    assert power["cables_kw"] == pytest.approx(0.0, abs=1e-3)                         # passive fiber only
    it_kw = 244.8 + 17.842 + 1.44                                                    # 264.082 kW
    assert power["it_kw"] == pytest.approx(it_kw, abs=1e-3)
    assert power["facility_kw"] == pytest.approx(it_kw * 1.4, abs=1e-3)              # design PUE 1.4


def test_describe_it_power_is_servers_and_switches():
    data = _json("describe", "designs/inference-disaggregated-h100.yaml")
    assert data["it_power_kw"] == pytest.approx({"servers": 24 * 10.2, "switches": (8 * 2218 + 98) / 1000,
                                                 "total": 24 * 10.2 + (8 * 2218 + 98) / 1000})


# built-in street prices (validator/resolve/catalog/data/prices/street.yaml), USD
STREET = {"dgx-h100": 270_000, "sonic-th5-64x800": 45_000, "sn2201": 4_200, "mma4z00-ns": 879,
          "fiber-mpo12-mmf 10 m": 74, "fiber-mpo12-mmf 5 m": 61, "fiber-mpo12-mmf 3 m": 48 + 3 * 2.6,
          "mma4z00-ns-flt": 1249, "cat6-rj45 10 m": 15.5,
          "cat6-rj45 5 m": 12.25, "rack-48u": 3_500, "pdu-3ph-415v-60a": 2_101, "rdhx-active-75": 17_600}


def test_bom_capex_with_and_without_price_overrides(tmp_path):
    totals = _json("bom", "designs/inference-disaggregated-h100.yaml")["totals"]
    p = STREET
    # 2 % spares per module line, rounded up: 192 leaf modules (96 up + 96 down cages) -> 196, 96 spine -> 98,
    # 96 server cages (24 x 4) -> 98 flat-top; 1 % per cable line: one row, the spines' rack R01-01 and the 6
    # GPU racks around their network rack R01-05 (positions 2-4, 6-8), a run |dx| x 0.6 m + 4 m: 4.6 m from
    # position 2 (5 m class, 32 fibers -> 33), 5.2-8.2 m from the others (10 m, 160 -> 162); the 192 in-rack
    # 3 m fibers (no DAC fits a flat DGX cage and a finned leaf cage) -> 194; 22 + 1, 10 + 1 copper
    cables = 162 * p["fiber-mpo12-mmf 10 m"] + 33 * p["fiber-mpo12-mmf 5 m"] + 194 * p["fiber-mpo12-mmf 3 m"] \
        + 23 * p["cat6-rj45 10 m"] + 11 * p["cat6-rj45 5 m"]
    by_category = {"server": 24 * p["dgx-h100"], "switch": 8 * p["sonic-th5-64x800"] + p["sn2201"],
                   "transceiver": (196 + 98) * p["mma4z00-ns"] + 98 * p["mma4z00-ns-flt"], "cable": cables,
                   "rack": 8 * p["rack-48u"],                       # 6 GPU racks + 2 network racks
                   "pdu": 28 * p["pdu-3ph-415v-60a"],               # 4 per GPU rack, 2 per network rack
                   "rdhx": 6 * p["rdhx-active-75"]}                 # one rear door per GPU rack
    assert totals["capex_by_category_usd"] == pytest.approx(by_category)
    assert totals["capex_usd"] == pytest.approx(sum(by_category.values()))
    design = (DESIGNS / "inference-disaggregated-h100.yaml").read_text(encoding="utf-8")
    path = tmp_path / "priced.yaml"
    path.write_text(design + "costs:\n  prices_usd: {dgx-h100: 250000, sonic-th5-64x800: 30000, mma4z00-ns: 1000}\n",
                    encoding="utf-8")
    totals = _json("bom", str(path))["totals"]
    overridden = {**by_category, "server": 24 * 250_000, "switch": 8 * 30_000 + p["sn2201"],
                  "transceiver": (196 + 98) * 1_000 + 98 * p["mma4z00-ns-flt"]}
    assert totals["capex_by_category_usd"] == pytest.approx(overridden)
    assert totals["capex_usd"] == pytest.approx(sum(overridden.values()))


def _llama3_70b_training_flops_per_token(seq: int, causal: bool = True) -> float:
    """3 x forward matmul FLOPs: h 8192, 64 heads x 128, 8 KV heads, SwiGLU FFN 28,672, 80 layers,
    vocabulary 128,256; the attention scores over half the s^2 pairs (causal, the estimator's `mfu`) or
    all of them (`mfu_full_attention`, the convention of older tables)."""
    h, kv, ffn, layers, vocab = 8192, 8 * 128, 28672, 80, 128256
    per_layer = h * h + h * h + 2 * h * kv + 3 * h * ffn            # Q, O, K and V, gate/up/down: 855,638,016
    matmul = 2 * (layers * per_layer + h * vocab)                   # + the LM head: 139,003,428,864
    attention = 2 * 2 * seq * h * layers                            # QK^T and AV: 21,474,836,480 at s = 8192
    return 3 * (matmul + (attention / 2 if causal else attention))  # 449,222,541,312 causal


def test_training_estimate_of_the_roce_cluster():
    est = _json("estimate", "designs/roce-h100-2tier.yaml")
    gpus, batch, seq = 2048, 1024, 8192             # 256 DGX H100; TP 8 x PP 4 x DP 64 = 2048
    step = est["step_time_s"]
    assert est["tokens_per_s"] == pytest.approx(batch * seq / step, rel=REL)
    assert est["tokens_per_s_per_gpu"] == pytest.approx(batch * seq / step / gpus, rel=REL)
    ideal = 2.0e12 / (batch * seq / step) / 86400                 # 2T tokens at the step rate
    assert est["time_to_train_ideal_days"] == pytest.approx(ideal, rel=REL)
    assert est["time_to_train_days"] == pytest.approx(ideal / est["goodput"], rel=2 * REL)
    assert 0.9 < est["goodput"] < 1                               # Llama 3: above 90 % effective training time
    model_tflops = _llama3_70b_training_flops_per_token(seq) * batch * seq / step / gpus / 1e12
    assert est["model_tflops_per_gpu"] == pytest.approx(model_tflops, rel=REL)   # ~377 TFLOPS
    assert est["mfu"] == pytest.approx(model_tflops / 989, rel=REL)             # of the 989 bf16 peak
    full = _llama3_70b_training_flops_per_token(seq, causal=False) * batch * seq / step / gpus / 1e12
    assert est["mfu_full_attention"] == pytest.approx(full / 989, rel=REL)
    # hardware FLOPs include the model's (and any recomputation); both utilisations are of the same peak
    assert est["hardware_tflops_per_gpu"] >= est["model_tflops_per_gpu"]
    assert est["hfu"] == pytest.approx(est["hardware_tflops_per_gpu"] / 989, rel=REL)
    parts = est["breakdown"]
    assert est["bubble_fraction"] == pytest.approx(parts["bubble"] / step, rel=2 * REL)
    assert est["microbatches_per_step"] == batch // (64 * 1)   # global batch / (DP x micro-batch)
    mem = est["memory_per_gpu_gb"]
    params = 70.55e9 / (8 * 4)                                  # per GPU after TP 8 x PP 4
    assert mem["weights_gb"] == pytest.approx(params * 2 / 1e9, rel=REL)         # bf16: 4.409 GB
    assert mem["gradients_gb"] == pytest.approx(params * 4 / 1e9, rel=REL)       # fp32 main gradients
    assert mem["optimizer_gb"] == pytest.approx(params * 12 / 64 / 1e9, rel=REL)  # ZeRO 1 over DP 64
    # fused attention, selective recompute, sequence parallelism: per token and layer 2 B x (norm input
    # 8192 + Q 8192 + K,V 2 x 1024 + attention output 8192) + 2 B x (norm input 8192 + gate and up
    # 2 x 28,672) = 184,320 B, / TP 8; 1F1B holds min(PP, micro-batches) = 4 micro-batches of a stage's
    # 20 layers, x (1 + (pp - 1) / (pp x vpp)) = 1.15 for interleaving; + 4 s b h / t x (1 + V / h)
    per_layer = seq * 1 * 184_320 / 8
    activations = per_layer * 20 * 4 * (1 + 3 / 20) + 4 * seq * 8192 / 8 * (1 + 128256 / 8192)
    assert mem["activations_gb"] == pytest.approx(activations / 1e9, rel=REL)     # 17.92 GB
    assert mem["total_gb"] == pytest.approx((params * 2 + params * 4 + params * 12 / 64 + activations) / 1e9 + 4,
                                            rel=REL)
    assert mem["hbm_gb"] == 80


def test_inference_estimate_of_the_disaggregated_fleet():
    est = _json("estimate", "designs/inference-disaggregated-h100.yaml")
    # Llama 3 70B, fp8 weights and KV cache, replicas of TP 8 on one DGX H100 (80 GB, 3.35 TB/s)
    kv_token = 80 * 2 * 8 * 128 * 1                       # layers x (K, V) x KV heads x head dim x 1 B
    assert est["kv_bytes_per_token"] == pytest.approx(kv_token, rel=REL)             # 163,840 B
    assert est["kv_bytes_per_token_per_gpu"] == kv_token / 8                         # one KV head per GPU
    # 80 layers x (150,994,944 attention + 704,643,072 MLP) + 2 x 1,050,673,152 embedding and LM head
    params = 80 * (150_994_944 + 704_643_072) + 2 * 1_050_673_152                   # 70,552,387,584
    weights = params * 1 / 8 / 1e9                                                   # 8.819 GB per GPU
    assert est["weights_gb_per_gpu"] == pytest.approx(weights, rel=REL)
    kv_gb = 80 * 0.9 - weights - 3.5                       # vLLM utilization 0.9, 3.5 GB reserve: 59.68
    assert est["kv_gb_per_gpu"] == pytest.approx(kv_gb, rel=REL)
    blocks = math.floor(kv_gb * 1e9 / (kv_token / 8 * 16))                           # 182,131 blocks of 16
    assert est["kv_tokens_per_replica"] == blocks * 16
    assert est["max_concurrency_per_replica"] == blocks // (8192 // 16)              # 355 at 8,192 tokens
    # admission at the average request length: the prompt plus half the output, 4,096 + 256 tokens
    batch = min(blocks * 16 // (4096 + 256), 1024)         # 669; max_num_seqs 1024
    assert est["batch"] == batch and est["batch_limit"] == "kv_cache"
    # P/D: a request costs 4,096 prompt tokens at the prefill pool's rate and 512 output tokens at the
    # decode pool's: per GPU, both pools in the balanced ratio, 512 / (4096 / prefill + 512 / decode)
    prefill, decode = est["prefill_tokens_per_s_per_gpu"], est["decode_tokens_per_s_per_gpu"]
    assert est["output_tokens_per_s_per_gpu"] == pytest.approx(512 / (4096 / prefill + 512 / decode), rel=2 * REL)
    # (each figure is printed to 4 significant digits, so they agree to a few parts in a thousand)
    assert est["output_tokens_per_s_per_replica"] == pytest.approx(decode * 8, rel=5e-3)
    assert est["requests_per_s_per_replica"] == pytest.approx(decode * 8 / 512, rel=5e-3)
    # targets: 20 requests/s and 2,000 in flight: at least ceil(2000 / 355) = 6 decode replicas
    assert est["replicas_needed"] >= math.ceil(2000 / 355) == 6
    assert est["replicas_planned"] == 16 and est["prefill_replicas_planned"] == 8
    # KV of a 4,096-token prompt over the 8 x 400 Gb/s of one TP-8 rank at 90% fabric efficiency
    assert est["kv_transfer_ms"] == pytest.approx(4096 * kv_token / (8 * 400 / 8 * 1e9 * 0.9) * 1e3, rel=REL)
    # cost per million output tokens: the busy GPU-hour of the design's TCO over the GPU's output tokens
    gpu_hour = _json("bom", "designs/inference-disaggregated-h100.yaml")["tco"]["gpu_hour_usd"]
    per_gpu = est["output_tokens_per_s_per_gpu"]
    assert est["cost_per_million_tokens"] == pytest.approx(gpu_hour / (per_gpu * 3600 / 1e6), rel=2 * REL)
    # rooflines no estimate may beat: at the target load a decode replica holds, by Little's law, at least
    # 20 / 16 requests/s x 512 tokens x TPOT sequences, and a decode step reads the weights and their KV
    # cache (at least the 4,096-token prompt each) once at 3.35 TB/s; the prefill of one prompt needs
    # 2 x 70.55e9 x 4,096 FLOPs over 8 x 1,979 TFLOPS
    tpot = est["tpot_p50_ms"] / 1e3
    in_flight = 20 / 16 * 512 * tpot                                                  # ~9.4 sequences
    assert tpot >= (weights * 1e9 + in_flight * 4096 * kv_token / 8) / 3.35e12
    assert est["ttft_p50_ms"] >= 2 * 70.55e9 * 4096 / (8 * 1979e12) * 1e3                     # 36.5 ms
