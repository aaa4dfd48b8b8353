"""TRN003 nvlink-tp-placement: Tensor parallelism inside the NVLink domain."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def nvlink_placement(ctx: Context) -> Iterator[Hit]:
    """Tensor parallelism (and expert parallelism when it rides NVLink, i.e. TP x EP fits in the domain)
    must fit in and divide the NVLink domain, so that no TP or expert group spans two domains: TP
    all-reduces run every layer, the expert all-to-all every MoE layer.

    Source: Shoeybi et al., "Megatron-LM" (2019) and Narayanan et al. (SC 2021): tensor parallelism
    all-reduces every layer and is kept inside the NVLink domain (8 GPUs per DGX node).
    Fix: lower `tp` to a divisor of the NVLink domain size, or use servers with a larger domain.
    Example:
        training: {parallelism: {tp: 16}}   # on 8-GPU HGX servers
    """
    t = ctx.training
    domain = ctx.resolved.nvlink_domain_gpus
    tp, ep = t.parallelism.tp, t.parallelism.ep
    if tp > domain or domain % tp:
        yield Hit(f"TP {tp} does not fit in (or divide) the {domain}-GPU NVLink domain: TP groups would span "
                  "domains", ("training", "parallelism", "tp"))
    elif ep > 1 and tp * ep <= domain and domain % (tp * ep):
        yield Hit(f"TP {tp} x EP {ep} = {tp * ep} GPUs ride NVLink but do not divide the {domain}-GPU domain: "
                  "some expert groups would span two domains", ("training", "parallelism", "ep"))


RULE = Rule("TRN003", "nvlink-tp-placement", "Tensor parallelism inside the NVLink domain", "error", "training",
            nvlink_placement)
