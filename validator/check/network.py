"""Network rules (NET) for every design."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit
from validator.check.context import Context


def switch_radix(ctx: Context) -> Iterator[Hit]:
    """No switch carries more links than it has ports at their speeds (cages and breakouts counted):
    the sizing reports a declared count or port number that cannot hold the fabric, and the link plan,
    checked switch by switch, names the busiest switch of any tier that overflows.

    Source: switch hardware manuals in the catalog (port groups, cages and breakouts).
    Fix: add switches to the tier (or remove its explicit count so clusterplan sizes it).
    Example:
        tiers: {leaf: {switch: sonic-th5-64x800, count: 1}}   # 256 server links on a 128-port leaf
    """
    for problem in ctx.problems("NET001"):
        yield Hit(f"{problem.path[1]}: {problem.message}", problem.path)
    for name, summary in ctx.derived.summaries.items():
        for b in summary.busiest:
            if b.down + b.up > b.capacity:
                yield Hit(f"{name} {b.role} {b.name}: {b.down} down + {b.up} up links > the {b.capacity} ports "
                          f"its tier reserves", ("fabrics", name, "tiers", b.role))


def even_striping(ctx: Context) -> Iterator[Hit]:
    """Every switch pair between two tiers carries the same number of links: uneven striping leaves
    some spines (or cores) carrying more of the traffic than others, so the fabric is not the
    non-blocking fabric its port counts suggest.

    Source: shared/docs/fabric-shapes.md section 1 (even striping; VMware leaf-spine design guide;
    the DGX SuperPOD RAs size spines to a divisor of the leaf uplinks: 16 spines for 3 SU, 18 for 4 SU
    of B300 XDR).
    Fix: remove the explicit spine (or core) count so clusterplan picks a divisor of the uplinks, or
    choose a count that divides the uplinks of each switch below.
    Example:
        tiers: {leaf: {switch: qm9700}, spine: {switch: qm9700, count: 12}}   # 32 uplinks over 12 spines
    """
    for problem in ctx.problems("NET006"):
        yield Hit(f"{problem.path[1]} {problem.message}", problem.path)


def declared_values(ctx: Context) -> Iterator[Hit]:
    """A value the design declares (a count, a port number, a pod size, a taper) is honoured or
    reported, never quietly replaced by a different fabric.

    Source: clusterplan design policy (a cabling plan must be the fabric the design says).
    Fix: change the declared value as the message says, or remove it so clusterplan sizes the tier.
    Example:
        tiers: {leaf: {switch: qm9700, downlinks: 32, uplinks: 16, oversubscription: "1:1"}}
    """
    for problem in ctx.problems("NET007"):
        yield Hit(f"{problem.path[1]}: {problem.message}", problem.path)


def connected_fabric(ctx: Context) -> Iterator[Hit]:
    """Every leaf of a fabric can reach every other: a fabric with more than one leaf and no spine is a
    set of islands (a rail-only fabric may leave its rails apart, but not the leaves of one rail).

    Source: a Clos fabric joins its leaves through the tier above (RFC 7938 section 3).
    Fix: add a spine tier, or a leaf with enough ports for every endpoint.
    Example:
        fabrics: {compute: {tiers: {leaf: {switch: sonic-th5-64x800}}}}   # 3 leaves, no spine
    """
    for name, fab in ctx.topology.fabrics.items():
        if len(fab.tiers) > 1 or not fab.buildable:
            continue
        leaves = fab.plane.leaves
        if leaves > 1:
            scope = "per rail" if fab.topology == "rail-only" else "per plane" if fab.planes > 1 else ""
            yield Hit(f"{name}: {leaves} leaves {scope} and no spine: they are not connected to each other".replace(
                "  ", " "), ("fabrics", name, "tiers"))


def link_speed_match(ctx: Context) -> Iterator[Hit]:
    """Both ends of a link run at the same speed: the server NIC at the fabric's speed, and every switch
    with ports at that speed.

    Source: IEEE 802.3 / InfiniBand: a link trains to one speed; auto-negotiation down wastes the NIC.
    Fix: set `speed_gbps` to the NIC speed, or pick switches and NICs of the same speed.
    Example:
        fabrics: {compute: {speed_gbps: 200}}   # DGX H100 compute NICs run at 400G
    """
    for name, fab in ctx.resolved.fabrics.items():
        if fab.speed_mismatch:
            yield Hit(f"{name}: server NICs run at {fab.nic_speed_gbps:g}G but the fabric is {fab.spec.speed_gbps:g}G",
                      ("fabrics", name, "speed_gbps"))
        if fab.spec.type == "infiniband" and any(t.switch.technology != "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an InfiniBand fabric with Ethernet switches", ("fabrics", name, "type"))
        if fab.spec.type != "infiniband" and any(t.switch.technology == "infiniband" for t in fab.tiers):
            yield Hit(f"{name}: an Ethernet fabric with InfiniBand switches", ("fabrics", name, "type"))


def oob_reach(ctx: Context) -> Iterator[Hit]:
    """An out-of-band management network reaches every server BMC and every switch management port.

    Source: shared/docs/domain.md section 3 (a separate out-of-band management network); DGX SuperPOD
    RA (SN2201 OOB switches).
    Fix: add `fabrics.oob` with 1G leaves; clusterplan puts one in each rack for what stands there.
    Example:
        fabrics: {compute: ...}   # no `oob:` fabric
    """
    if ctx.design.fabrics.oob is None:
        yield Hit("no out-of-band management network (fabrics.oob)", ("fabrics",))
        return
    summary = ctx.derived.summaries.get("oob")
    if summary is None:
        return
    if ctx.resolved.fabrics["oob"].links_per_server == 0:
        yield Hit("the servers have no BMC port on the out-of-band network", ("fabrics", "oob"))
    reached = sum(b.count for b in summary.bundles if b.a.endswith("-mgmt"))
    expected = sum(f.count(t.role) * t.switch.mgmt_ports for name, f in ctx.topology.fabrics.items()
                   if name != "oob" for t in f.tiers)
    if reached < expected:
        yield Hit(f"only {reached} of {expected} switch management ports reach the out-of-band network",
                  ("fabrics", "oob"))


def optics_reach(ctx: Context) -> Iterator[Hit]:
    """Every link's media reaches its length: passive copper a few metres and only inside a rack,
    multimode SR 50 m at NDR/400G, single-mode DR 100-500 m, FR 2 km. Lengths come from the rack layout
    of the cabling plan.

    Source: NVIDIA LinkX specifications and "Interconnect cabling requirements NDR/400G" (MPO MMF <= 50 m,
    MPO SMF <= 500 m, LC SMF <= 2 km); shared/docs/hardware-notes.md section 6.
    Fix: let clusterplan choose the media (`media: auto`), shorten the runs with a tighter layout, or add
    longer-reach optics to the catalog.
    Example:
        fabrics: {compute: {media: {servers: dac}}}   # DAC from servers to leaves in another rack
    """
    from validator.derive.links import device_namer

    plan = ctx.derived.cabling
    for (fabric, end, kind), (a_role, a_idx, z_role, z_idx, m, length) in sorted(
            plan.tally.problems.items(), key=lambda kv: kv[0]):
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
        yield Hit(f"{fabric} {a_role} -> {z_role} (e.g. {a} -> {z}): {problem}", path)


def plan_speed(ctx: Context, fabric: str, a_role: str) -> str:
    """Speed of a fabric's links from `a_role` (the uplink speed for switch tiers)."""
    fab = ctx.topology.fabrics[fabric]
    tier = fab.tier(a_role)
    return f"{tier.up_speed_gbps:g}" if tier is not None else f"{fab.speed_gbps:g}"


def backend_fabric(ctx: Context) -> Iterator[Hit]:
    """A workload whose GPUs talk across servers has a backend (compute) fabric: every training job;
    an inference replica larger than one server; prefill/decode disaggregation that moves the KV cache
    over the compute fabric. An inference fleet whose replicas fit in one server needs none.

    Source: shared/docs/domain.md sections 1 and 4 (independent replicas need no east-west fabric; a
    replica split across devices, disaggregation and expert parallelism put state on the network).
    Fix: add `fabrics.compute`, or shape the replicas to fit inside one server.
    Example:
        fabrics: {oob: ...}   # a training cluster with no compute fabric
    """
    if ctx.design.fabrics.compute is not None:
        return
    if ctx.design.training is not None:
        yield Hit("a training cluster has no compute fabric for its gradient, pipeline and expert traffic",
                  ("fabrics",))
        return
    inf = ctx.design.inference
    if inf is None:
        return
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
