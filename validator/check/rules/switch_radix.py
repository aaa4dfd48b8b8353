"""NET001 switch-radix: Ports used within switch radix."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def switch_radix(ctx: Context) -> Iterator[Hit]:
    """No switch carries more links than it has ports at their speeds (cages and breakouts counted):
    the sizing reports a declared count or port number that cannot hold the fabric, and the link plan,
    checked switch by switch, names the busiest switch of any tier that overflows. The link plan never
    puts more links on a switch than its tier reserves (the invariant of tests/invariants.py, checked by
    tests/test_port_truth.py over random fabrics), so no rule case reaches the second check: it stays as
    the guard that turns a bug there into a finding instead of a cabling plan nobody can build.

    Source: switch hardware manuals in the catalog (port groups, cages and breakouts).
    Fix: add switches to the tier (or remove its explicit count so clusterplan sizes it).
    Example:
        compute: {server: dgx-h200, count: 32}
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800, count: 1}}}}   # 256 server links, 128 ports
    """
    for problem in ctx.problems("NET001"):
        yield Hit(f"{problem.path[1]}: {problem.message}", problem.path)
    for name, summary in ctx.derived.summaries.items():
        for b in summary.busiest:
            if b.down + b.up > b.capacity:  # pragma: no cover - the link plan's invariant (docstring)
                yield Hit(f"{name} {b.role} {b.name}: {b.down} down + {b.up} up links > the {b.capacity} ports "
                          f"its tier reserves", ("fabrics", name, "tiers", b.role))


RULE = Rule("NET001", "switch-radix", "Ports used within switch radix", "error", "all", switch_radix, waivable=False)
