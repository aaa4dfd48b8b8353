"""TRN006 bandwidth-per-gpu: Compute fabric bandwidth per GPU."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def bandwidth_per_gpu(ctx: Context) -> Iterator[Hit]:
    """A training compute fabric gives each GPU at least 400 Gb/s (warning below), never under 100 Gb/s
    (error); one compute NIC per GPU. A job inside one server with no compute fabric needs none.

    Source: NVIDIA DGX SuperPOD RA for DGX H100, Network Fabrics: 8 x NDR 400 Gb/s per DGX H100, one
    ConnectX-7 per GPU; Meta, "The Llama 3 Herd of Models" (arXiv 2407.21783) section 3.3.1: 400 Gb/s
    per GPU on both its RoCE and InfiniBand clusters; below 100 Gb/s is inference-class bandwidth.
    Fix: use servers with one 400G compute NIC per GPU (e.g. DGX/HGX with 8 x ConnectX-7 400G).
    Example:
        compute: {server: pcie-l40s-8gpu}   # 4 x 200G for 8 GPUs = 100 Gb/s per GPU
    """
    fab = ctx.resolved.fabrics.get("compute")
    gpus = ctx.resolved.server.gpus
    p = ctx.training.parallelism
    if fab is None and p.tp * p.pp * p.dp * p.cp <= gpus:
        return      # a single-node job and no compute fabric: no GPU traffic leaves the server (NET009)
    per_gpu = ctx.derived.gbps_per_gpu
    path = ("compute", "server")
    if per_gpu < ctx.threshold("training_bw_per_gpu_error_gbps"):
        yield Hit(f"{per_gpu:g} Gb/s of compute fabric per GPU; training needs at least "
                  f"{ctx.threshold('training_bw_per_gpu_warn_gbps'):g}", path)
    elif per_gpu < ctx.threshold("training_bw_per_gpu_warn_gbps"):
        yield Hit(f"{per_gpu:g} Gb/s of compute fabric per GPU, below the "
                  f"{ctx.threshold('training_bw_per_gpu_warn_gbps'):g} Gb/s standard", path, severity="warning")
    if fab and fab.links_per_server:
        nics = fab.links_per_server // max(1, (fab.nic.ports if fab.nic else 1) * fab.ports_per_nic_port)
        if nics != gpus:
            yield Hit(f"{nics} compute NICs for {gpus} GPUs per server; the standard is one per GPU", path,
                      severity="warning")


RULE = Rule("TRN006", "bandwidth-per-gpu", "Compute fabric bandwidth per GPU", "error", "training",
            bandwidth_per_gpu, thresholds=("training_bw_per_gpu_warn_gbps", "training_bw_per_gpu_error_gbps"))
