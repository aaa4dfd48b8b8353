"""NET003 oob-reach: Out-of-band network reaches every device."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def oob_reach(ctx: Context) -> Iterator[Hit]:
    """An out-of-band management network reaches every server BMC and every switch management port.

    Source: NVIDIA DGX SuperPOD RA, Network Fabrics (a separate out-of-band management network of
    SN2201 switches for BMCs and switch management ports).
    Fix: add `fabrics.oob` with 1G leaves; clusterplan puts one in each rack for what stands there.
    Example:
        fabrics: {oob: null}   # no out-of-band network
    """
    if ctx.design.fabrics.oob is None:
        yield Hit("no out-of-band management network (fabrics.oob)", ("fabrics",))
        return
    # every switch management port gets a port of an out-of-band leaf by construction (the OOB leaves
    # are sized from the management ports of each rack: validator/expand/oob.py; the invariant is
    # tests/test_floor_properties.py's); what a design can still leave out is the servers' BMC port
    if ctx.resolved.fabrics["oob"].links_per_server == 0:
        yield Hit("the servers have no BMC port on the out-of-band network", ("fabrics", "oob"))


RULE = Rule("NET003", "oob-reach", "Out-of-band network reaches every device", "warning", "all", oob_reach)
