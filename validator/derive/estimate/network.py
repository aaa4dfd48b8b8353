"""The network a serving replica uses, from the design: NVLink inside the domain, the compute fabric
beyond it (per-GPU bandwidth = links per server x link speed / GPUs per server, divided by the worst
taper of the fabric's tiers), and the one KV-transfer function that the estimate and INF004 share."""

from __future__ import annotations

from validator.base.facts import fact
from validator.derive.estimate.engine import Network, ServingConstants
from validator.derive.estimate.hardware import gbps_per_gpu, worst_taper
from validator.derive.estimate.kv import Shape, kv_bytes_per_token
from validator.expand.topology import Topology
from validator.resolve.catalog.entries import LlmModel


def network_of(topology: Topology, fabric: str = "compute") -> Network:
    r = topology.resolved
    gpus = r.server.gpus
    fab = r.fabrics.get(fabric)
    links = fab.links_per_server if fab else 0
    speed = fab.spec.speed_gbps if fab else 0.0
    rdma = fab is not None and (fab.spec.type in ("infiniband", "roce") or fab.spec.congestion_control is not None)
    return Network(r.nvlink_domain_gpus, gpus, r.gpu.scaleup_bandwidth_gbs / 2,
                   gbps_per_gpu(r, fabric) / worst_taper(topology, fabric), speed, links / gpus, rdma)


@fact
class KvTransfer:
    bytes: float           # one request's prompt KV cache, all layers
    gbps: float            # bandwidth that carries it (the NICs of one attention rank, both ends)
    links: float           # links used at the narrower end
    seconds: float


def kv_transfer(model: LlmModel, kv_precision: str, prompt_tokens: float, prefill: Shape, decode: Shape,
                net: Network, c: ServingConstants, via: str = "rdma") -> KvTransfer | None:
    """Prefill-to-decode transfer of one prompt's KV cache (docs/estimator.md, Inference): it leaves
    from the GPUs of the prefill rank that computed it and lands on the decode rank that will hold it,
    each GPU over its own NICs; NVLink when `via` is nvlink. None when no link carries it."""
    nbytes = prompt_tokens * kv_bytes_per_token(model, kv_precision)
    if via == "nvlink":
        gpus = min(prefill.rank_gpus, decode.rank_gpus)
        gbps = gpus * net.nvlink_gbs * 8
        return KvTransfer(nbytes, gbps, gpus, nbytes / (gbps / 8 * 1e9 * c.nvlink_efficiency))
    links = min(prefill.rank_gpus, decode.rank_gpus) * net.links_per_gpu
    if links <= 0 or net.rdma_gbps_per_gpu <= 0:
        return None
    gbps = min(prefill.rank_gpus, decode.rank_gpus) * net.rdma_gbps_per_gpu
    return KvTransfer(nbytes, gbps, links, nbytes / (gbps / 8 * 1e9 * c.fabric_efficiency))
