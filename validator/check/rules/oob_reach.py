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
    if ctx.resolved.fabrics["oob"].links_per_server == 0:
        yield Hit("the servers have no BMC port on the out-of-band network", ("fabrics", "oob"))
    # every switch management port gets a port of an out-of-band leaf by construction (the OOB leaves
    # are sized from the management ports of each rack: validator/expand/oob.py; the invariant is
    # tests/test_floor_properties.py's), so no rule case reaches the count below: it stays as the guard
    # that reports a bug there instead of printing an OOB plan that leaves switches unmanaged
    summary = ctx.derived.summaries.get("oob")
    reached = sum(b.count for b in summary.bundles if b.a.endswith("-mgmt")) if summary else 0
    expected = sum(f.count(t.role) * t.switch.mgmt_ports for name, f in ctx.topology.fabrics.items()
                   if name != "oob" for t in f.tiers)
    if reached < expected:  # pragma: no cover - the OOB sizer's invariant (comment above)
        yield Hit(f"only {reached} of {expected} switch management ports reach the out-of-band network",
                  ("fabrics", "oob"))


RULE = Rule("NET003", "oob-reach", "Out-of-band network reaches every device", "warning", "all", oob_reach)
