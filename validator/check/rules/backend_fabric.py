"""NET009 backend-fabric: A backend fabric where GPUs talk across servers."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def backend_fabric(ctx: Context) -> Iterator[Hit]:
    """A workload whose GPUs talk across servers has a backend (compute) fabric: every training job larger
    than one server;
    an inference replica larger than one server; prefill/decode disaggregation that moves the KV cache
    over the compute fabric. An inference fleet whose replicas fit in one server needs none.

    Source: NVIDIA DGX SuperPOD and HGX reference architectures (a tensor-parallel replica spans
    servers only over a compute fabric); DistServe (Zhong et al., OSDI 2024) and Mooncake (Qin et al.,
    FAST 2025): disaggregated prefill and decode ship the KV cache over the network.
    Fix: add `fabrics.compute`, or shape the replicas to fit inside one server.
    Example:
        fabrics: {compute: null}   # no compute fabric, yet
        inference: {replica: {gpus: 16, tp: 8, pp: 2}}   # each replica spans two 8-GPU servers
    """
    if ctx.design.fabrics.compute is not None:
        return
    if ctx.design.training is not None:
        p = ctx.design.training.parallelism
        if p.tp * p.pp * p.dp * p.cp <= ctx.resolved.server.gpus:
            return      # the job runs inside one server (a single-node system): nothing crosses servers
        yield Hit("a training cluster has no compute fabric for its gradient, pipeline and expert traffic",
                  ("fabrics",))
        return
    inf = ctx.inference
    per_server = ctx.resolved.server.gpus
    shapes: list[tuple[str | int, ...]] = [("inference", "replica", "gpus")]
    replicas = [inf.replica]
    if inf.disaggregation is not None:
        replicas = [inf.disaggregation.prefill.replica, inf.disaggregation.decode.replica]
        shapes = [("inference", "disaggregation", role, "replica", "gpus") for role in ("prefill", "decode")]
        if inf.disaggregation.kv_transfer_fabric == "compute":
            yield Hit("prefill/decode disaggregation moves the KV cache over the compute fabric, which the design "
                      "does not have", ("inference", "disaggregation", "kv_transfer_fabric"))
    for path, rep in zip(shapes, replicas, strict=True):
        if rep.gpus > per_server:
            yield Hit(f"a {rep.gpus}-GPU replica spans {-(-rep.gpus // per_server)} servers of {per_server} GPUs "
                      "and needs a compute fabric between them", path)


RULE = Rule("NET009", "backend-fabric", "A backend fabric where GPUs talk across servers", "error", "all",
            backend_fabric)
