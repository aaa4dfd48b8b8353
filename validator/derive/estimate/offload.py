"""Activation offload: the offloaded share of each micro-batch's activations goes to host memory during
forward and comes back during backward over the GPU's host link, hidden behind that compute when it
can be (Megatron-LM / Transformer Engine CPU offloading)."""

from __future__ import annotations

from validator.base.estimate_tables import efficiency
from validator.derive.estimate.setup import TrainingSetup


def host_link_gbs(gpu: str) -> float:
    """GPU-to-host bandwidth per direction, GB/s (validator/data/efficiency.yaml `host_link`)."""
    table = efficiency().host_link
    return table.get(gpu, table["default"])


def offloaded_bytes(s: TrainingSetup) -> float:
    """Activation bytes one micro-batch offloads on the busiest stage (Korthikanti's 34 s b h per layer
    with sequence parallelism, as stored)."""
    if s.activation_offload <= 0:
        return 0.0
    layers = max(s.stage_layers)
    return s.activation_offload * 34 * s.tokens_per_microbatch * s.model.hidden / s.tp * layers


def offload_exposed(s: TrainingSetup, forward: float, backward: float) -> float:
    """Seconds per micro-batch the copies add beyond the forward and backward they overlap."""
    size = offloaded_bytes(s)
    if size <= 0:
        return 0.0
    t = size / (host_link_gbs(s.gpu.id) * 1e9)
    return max(0.0, t - forward) + max(0.0, t - backward)
