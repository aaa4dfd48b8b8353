"""NET005 optics-reach: Every link's media reaches its length."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def optics_reach(ctx: Context) -> Iterator[Hit]:
    """Every link's media reaches its length: passive copper a few metres and only inside a rack,
    multimode SR 50 m at NDR/400G, single-mode DR 100-500 m, FR 2 km. Lengths come from the rack layout
    of the cabling plan.

    Source: NVIDIA LinkX specifications and "Interconnect cabling requirements NDR/400G" (MPO MMF <= 50 m,
    MPO SMF <= 500 m, LC SMF <= 2 km); NVIDIA Cable Management Guidelines (DAC 2-5 m).
    Fix: let clusterplan choose the media (`media: auto`), shorten the runs with a tighter layout, or add
    longer-reach optics to the catalog.
    Example:
        fabrics: {compute: {media: {servers: dac}}}   # DAC from servers to leaves in another rack
    """
    from validator.derive.links import device_namer

    plan = ctx.derived.cabling
    for (fabric, end, kind), (a_role, a_idx, z_role, z_idx, m, length) in sorted(
            plan.tally.problems.items(), key=lambda kv: kv[0]):
        if kind == "cage":
            continue        # NET011 reports a link that no catalog part fits
        if kind == "none":
            problem = f"no catalog media reaches {length:.0f} m at {plan_speed(ctx, fabric, a_role)}G"
        elif kind == "copper":
            problem = f"{m.kind} copper between racks ({length:.0f} m)"
        else:
            problem = f"{m.kind} reaches {m.reach_m:g} m but the run is {length:.0f} m"
        spec = getattr(ctx.design.fabrics, fabric)
        forced = spec.media is not None and getattr(spec.media, end) != "auto"
        path = ("fabrics", fabric, "media", end) if forced else ("fabrics", fabric, "speed_gbps")
        a = device_namer(ctx.topology, fabric, a_role)(a_idx)
        z = device_namer(ctx.topology, fabric, z_role)(z_idx)
        hint = "" if forced or kind == "copper" else _placement_hint(ctx, fabric, (a_role, a_idx), (z_role, z_idx))
        yield Hit(f"{fabric} {a_role} -> {z_role} (e.g. {a} -> {z}): {problem}", path, hint=hint)


def _placement_hint(ctx: Context, fabric: str, a: tuple[str, int], z: tuple[str, int]) -> str:
    """Which placement setting shortens the run: the racks' halls and rows say."""
    plan, layout = ctx.derived.cabling, ctx.derived.layout
    ra, rz = plan.place(fabric, *a).rack, plan.place(fabric, *z).rack
    sa, sz = layout.spot(ra), layout.spot(rz)
    where = f"{layout.rack_name(ra)} to {layout.rack_name(rz)}"
    if sa.hall != sz.hall:
        return (f"the run goes between halls ({where}): more racks a hall (`site.layout.rows_per_hall`, "
                "`racks_per_row`) keeps them in one, a smaller `site.layout.hall_spacing_m` or halls on both "
                "sides of the corridor (`site.layout.hall_sides: 2`) shortens it, or "
                f"`fabrics.{fabric}.tiers.{z[0]}.placement: row` stands the {z[0]} with what it serves")
    return (f"the run crosses the hall ({where}): fewer `site.layout.racks_per_row` or `rows_per_hall`, "
            f"or `fabrics.{fabric}.tiers.{z[0]}.placement: row`, shorten it")


def plan_speed(ctx: Context, fabric: str, a_role: str) -> str:
    """Speed of a fabric's links from `a_role` (the uplink speed for switch tiers)."""
    fab = ctx.topology.fabrics[fabric]
    tier = fab.tier(a_role)
    return f"{tier.up_speed_gbps:g}" if tier is not None else f"{fab.speed_gbps:g}"


RULE = Rule("NET005", "optics-reach", "Every link's media reaches its length", "error", "all",
            optics_reach, waivable=False)
