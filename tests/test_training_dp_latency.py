"""Data-parallel collectives pay NCCL's ring latency and cannot hide their last bucket (issue 32):
hand arithmetic from NCCL's tuning model and Megatron-LM's bucket size (validator/data/efficiency.yaml,
`communication`)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.builders import training_setup
from validator.derive.estimate.comm import ring_latency
from validator.derive.estimate.constants import training_constants
from validator.derive.estimate.data_parallel import buckets, dp_cost, dp_traffic
from validator.derive.estimate.setup import Sharding, TrainingSetup
from validator.derive.estimate.training import estimate_training
from validator.resolve.catalog import builtin_catalog

CAT = builtin_catalog()
C = training_constants("h100-sxm", "bf16")


def _setup(**kw: object) -> TrainingSetup:
    return training_setup(**kw)


def test_ring_latency_follows_nccl_tuning_model():
    # NCCL ring all-gather over n ranks on N nodes: 8.4 us + (n - N) x 3.4 us + (N - 1) x 14 us
    s = _setup(dp=512)
    assert ring_latency(s, C, 512, 1) == pytest.approx((8.4 + 448 * 3.4 + 63 * 14) * 1e-6)   # 2.414 ms
    # members 8 ranks apart (TP 8): one per node, every step crosses the network
    assert ring_latency(s, C, 64, 8) == pytest.approx((8.4 + 63 * 14) * 1e-6)
    assert ring_latency(s, C, 1, 1) == 0.0
    # inside one NVLink domain: 8.4 + 7 x 3.4 us
    assert ring_latency(s, C, 8, 1) == pytest.approx((8.4 + 7 * 3.4) * 1e-6)


def test_megatron_bucket_count():
    # bucket = max(40M, 1M x DP) parameters: 8B over DP 8 -> 40M -> ceil(8.03e9 / 40e6) buckets;
    # over DP 512 -> 512M -> 16 buckets
    s = _setup(dp=8)
    params = s.model.params_b * 1e9
    assert buckets(s, C, 8) == -(-params // 40e6)
    assert buckets(s, C, 512) == -(-params // 512e6)


def test_zero3_pays_one_ring_latency_per_layer_and_collective():
    # FSDP gathers each layer in forward and backward and reduce-scatters its gradients: per micro-batch
    # 3 x layers ring latencies on top of the bytes over the link
    s = _setup(dp=512, global_batch=1024, micro_batch=1, sharding=Sharding(3))
    m, layers = s.microbatches, s.model.layers
    cost = dp_cost(s, C, 0.0, 0.0, layers)
    no_latency = dataclasses.replace(C, ring_base_latency_s=0.0, ring_nvlink_step_s=0.0, ring_net_step_s=0.0)
    bare = dp_cost(s, no_latency, 0.0, 0.0, layers)
    assert cost.time - bare.time == pytest.approx(m * 3 * layers * ring_latency(s, C, 512, 1))
    assert cost.traffic == dp_traffic(s)


def test_last_bucket_is_never_hidden():
    # one micro-batch, a backward far longer than the traffic: still the last bucket's reduce-scatter
    # and the first bucket's all-gather wait (they have no compute left to hide behind)
    s = _setup(dp=64, global_batch=64, micro_batch=1, sharding=Sharding(1))
    cost = dp_cost(s, C, 100.0, 200.0, s.model.layers)
    nb = buckets(s, C, 64)
    assert cost.exposed >= cost.time / nb * (1 - 1e-9)
    assert cost.exposed < cost.time


def test_zero3_strong_scaling_falls_per_gpu():
    # a fixed global batch over more GPUs: fewer tokens per GPU to hide the same per-layer gathers
    # behind and longer rings, so TFLOP/s per GPU falls (the published ZeRO-3 series do)
    flops = [estimate_training(_setup(model=CAT.model("llama3-70b"), dp=n, global_batch=512, micro_batch=1,
                                      seq=4096, sharding=Sharding(3), recompute="full")).model_tflops_per_gpu
             for n in (128, 256, 512)]
    assert flops[0] > flops[1] > flops[2]


def test_hsdp_replica_all_reduce_hides_behind_the_backward_but_its_last_layer():
    # HSDP all-reduces each unit's gradient shard across replicas as the backward produces it: with a
    # long backward only the last layer's share waits (groups of 2 inside NVLink: the replica
    # all-reduce over 32 replicas across nodes is most of the traffic time)
    s = _setup(dp=64, global_batch=64, micro_batch=1, sharding=Sharding(3, 2))
    wide = dp_cost(s, C, 100.0, 200.0, s.model.layers)
    bare = dp_cost(s, C, 0.0, 0.0, s.model.layers)
    assert wide.exposed < bare.exposed / 10
