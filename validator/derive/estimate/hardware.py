"""The two hardware figures both halves of the estimator and the rules read, each defined once:
the dense tensor peak of a GPU at a precision, and the scale-out bandwidth of one GPU on a fabric."""

from __future__ import annotations

from validator.expand.topology import Topology
from validator.resolve.catalog.entries import Gpu
from validator.resolve.resolved import Resolved

# A precision the GPU has no tensor cores for runs on the next wider one it has: the weights are widened
# before the matmul (an FP4 model on Hopper runs FP8 or 16-bit kernels, never at an FP4 rate).
# fp32 GEMMs are taken at the 16-bit rate (TF32/BF16 tensor cores), as every catalog GPU lists bf16.
WIDER = {"fp4": "fp8", "int4": "int8", "int8": "fp8", "fp8": "bf16", "fp16": "bf16", "bf16": "fp16",
         "fp32": "bf16"}


def peak_flops(gpu: Gpu, precision: str) -> float:
    """Dense tensor peak at `precision`, FLOP/s; a precision the GPU lacks takes the next wider one it
    lists (`WIDER`: fp4 -> fp8 -> bf16 -> fp16, int4 -> int8 -> fp8)."""
    tflops: dict[str, float] = {str(k): v for k, v in gpu.tflops.items()}
    key, seen = precision, set[str]()
    while key not in tflops:
        seen.add(key)
        key = WIDER.get(key, "bf16")
        if key in seen:
            raise ValueError(f"GPU {gpu.id} lists no tensor peak for {precision} or a wider precision")
    return tflops[key] * 1e12


def peak16_flops(gpu: Gpu) -> float:
    """The 16-bit peak (attention, LM head), FLOP/s."""
    return peak_flops(gpu, "bf16")


def gbps_per_gpu(resolved: Resolved, fabric: str = "compute") -> float:
    """Scale-out bandwidth of one GPU, Gb/s: the server's links to the fabric, counted at the fabric's
    speed (a native 800G port split in 2 x 400G is 2 links), over its GPUs. 0 without such links."""
    fab = resolved.fabrics.get(fabric)
    if fab is None or not fab.links_per_server:
        return 0.0
    return fab.links_per_server * fab.spec.speed_gbps / resolved.server.gpus


def worst_taper(topology: Topology, fabric: str = "compute") -> float:
    """Worst downlink/uplink ratio over the fabric's tiers (1 = non-blocking)."""
    tiers = topology.fabrics[fabric].tiers if fabric in topology.fabrics else ()
    return max([1.0, *(t.ratio for t in tiers)])
