"""One definition each of the per-GPU scale-out bandwidth and the tensor peak by precision
(issue 26): every reader (the training estimate, TRN006, the serving model) sees the same figure."""

from __future__ import annotations

import yaml

from tests.builders import topology_of
from tests.helpers import ROOT
from validator.check.context import Context
from validator.check.rules.bandwidth_per_gpu import bandwidth_per_gpu
from validator.derive import Derived
from validator.derive.estimate import estimate
from validator.derive.estimate.hardware import peak_flops
from validator.derive.estimate.network import network_of
from validator.resolve.catalog import builtin_catalog


def test_b300_dual_plane_is_800_gbps_per_gpu_everywhere():
    # designs/b300-spectrum-x-dual-plane.yaml: DGX B300, 8 ConnectX-8 at 800G, each port split into
    # 2 x 400G on two planes (plane_of: port) = 16 links of 400G per server / 8 GPUs = 800 Gb/s per GPU
    # (not 16 x 800G / 8 = 1,600: the links are already counted at the fabric's 400G).
    design = yaml.safe_load((ROOT / "designs" / "b300-spectrum-x-dual-plane.yaml").read_text())
    topo = topology_of(design)
    fab = topo.resolved.fabrics["compute"]
    assert (fab.links_per_server, fab.spec.speed_gbps, topo.resolved.server.gpus) == (16, 400, 8)
    expected = 16 * 400 / 8
    est = estimate(topo)
    assert est.training is not None
    assert est.training.setup.fabric.gbps_per_gpu == expected
    assert est.as_dict()["assumptions"]["fabric_gbps_per_gpu"] == expected
    # TRN006 reads the same figure: with the warning threshold raised above it, its message names it
    ctx = Context(topo, Derived(topo), overrides={"training_bw_per_gpu_warn_gbps": 1000.0})
    messages = [h.message for h in bandwidth_per_gpu(ctx)]
    assert any(m.startswith(f"{expected:g} Gb/s of compute fabric per GPU") for m in messages), messages
    # the serving model's network (non-blocking tiers: no taper)
    assert network_of(topo).rdma_gbps_per_gpu == expected


def test_peak_flops_one_rule_for_a_precision_the_gpu_lacks():
    # catalog gpus.yaml: H100 SXM bf16 989, fp8 1979 dense TFLOP/s, no FP4 tensor cores; A100 no FP8.
    # A precision the GPU lacks runs on the next wider one it lists: fp4 -> fp8, int4 -> int8 -> fp8,
    # fp8 -> bf16. Training and serving read the same function.
    gpus = builtin_catalog().entries["gpu"]
    h100, a100 = gpus["h100-sxm"], gpus["a100-80gb-sxm"]
    assert peak_flops(h100, "fp4") == 1979e12
    assert peak_flops(h100, "int4") == 1979e12
    assert peak_flops(h100, "bf16") == 989e12
    assert peak_flops(a100, "fp8") == 312e12
    assert peak_flops(a100, "fp4") == 312e12
    assert peak_flops(gpus["b200"], "fp4") == 9000e12
