"""Training rules (TRN): a training cluster is one synchronous machine; the slowest link sets the pace."""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.resources import load_data
from validator.check.base import Hit
from validator.check.context import Context
from validator.derive.estimate.memory import precision_bytes, training_memory


def lossless_fabric(ctx: Context) -> Iterator[Hit]:
    """An Ethernet training fabric (typed roce or plain ethernet: the RDMA traffic is the same) must be
    lossless: PFC on the RDMA priority, ECN marking, a PFC watchdog, and the same priority and
    DSCP-to-traffic-class mapping on switches and NICs; or run lossy with a named congestion control
    built for loss (validator/data/congestion_control.yaml). InfiniBand is lossless natively
    (credit-based flow control).

    Source: shared/docs/domain.md section 1 (zero loss tolerance; RoCE with PFC + ECN); NVIDIA Cumulus
    Linux RoCE lossless defaults (PFC on priority 3, ECN on TC3, CNP on TC6).
    Fix: add `fabrics.compute.lossless` with PFC on the RoCE priority, ECN thresholds, pfc_watchdog
    enabled, and NIC settings that match the switch; or set `congestion_control:` to a lossy-safe scheme.
    Example:
        lossless: {switch: {pfc_watchdog: {enabled: false}, ...}, nic: ...}
    """
    fab = ctx.design.fabrics.compute
    if fab is None or fab.type == "infiniband":
        return
    base = ("fabrics", "compute")
    ll = fab.lossless
    schemes = load_data("congestion_control.yaml")["schemes"]
    if ll is None:
        if fab.congestion_control is None:
            yield Hit(f"{fab.type} training fabric carries RDMA with no lossless settings (PFC, ECN, PFC watchdog) "
                      "and no lossy-safe congestion control", (*base, "type"))
        elif fab.congestion_control not in schemes:
            yield Hit(f"congestion control '{fab.congestion_control}' is not one that makes RDMA safe on a lossy "
                      f"fabric ({', '.join(sorted(schemes))})", (*base, "congestion_control"))
        return
    sw, nic = ll.switch, ll.nic
    roce_prio = nic.roce_priority
    if roce_prio not in sw.pfc_priorities:
        yield Hit(f"PFC is enabled on priorities {sw.pfc_priorities} on switches, but RoCE traffic uses "
                  f"priority {roce_prio}", (*base, "lossless", "switch", "pfc_priorities"))
    if sorted(nic.pfc_priorities) != sorted(sw.pfc_priorities):
        yield Hit(f"NIC PFC priorities {nic.pfc_priorities} differ from switch PFC priorities "
                  f"{sw.pfc_priorities}", (*base, "lossless", "nic", "pfc_priorities"))
    tc = sw.dscp_to_tc.get(str(nic.roce_dscp))
    if tc != sw.roce_tc:
        yield Hit(f"NICs mark RoCE with DSCP {nic.roce_dscp}, which switches map to traffic class {tc}, "
                  f"not the RoCE class {sw.roce_tc}", (*base, "lossless", "switch", "dscp_to_tc"))
    if sw.ecn is None:
        yield Hit("no ECN marking on the RoCE queue: DCQCN cannot slow senders before PFC pauses the link",
                  (*base, "lossless", "switch"))
    elif sw.ecn.min_threshold_kb >= sw.ecn.max_threshold_kb:
        yield Hit(f"ECN min threshold {sw.ecn.min_threshold_kb:g} KB is not below max "
                  f"{sw.ecn.max_threshold_kb:g} KB", (*base, "lossless", "switch", "ecn", "min_threshold_kb"))
    if sw.pfc_watchdog is None or not sw.pfc_watchdog.enabled:
        yield Hit("PFC watchdog is off: a stuck lossless queue (PFC storm) can stall the whole fabric",
                  (*base, "lossless", "switch", *(("pfc_watchdog", "enabled") if sw.pfc_watchdog else ())))
    inband = ctx.design.fabrics.inband
    if inband is not None and inband.lossless is not None:
        yield Hit("the in-band (frontend) network carries a lossless class; PFC there spreads pauses to "
                  "user-facing traffic", ("fabrics", "inband", "lossless"), severity="warning")


def non_blocking(ctx: Context) -> Iterator[Hit]:
    """Every tier of a training compute fabric is 1:1 (non-blocking): the bandwidth a switch takes in
    from below is at most what it can send up, computed per tier from the real ports and speeds of the
    expanded topology. A taper the design declares at a tier (a zone's aggregation tier) is reported
    as what it is, a taper at that tier, and can be waived.

    Source: shared/docs/domain.md section 1 (1:1 non-blocking training fabric); DGX SuperPOD RA
    ("balanced, full-fat tree"); Llama 3 paper section 3.3.1 (full bisection inside a 3,072-GPU pod,
    1:7 above it, with a topology-aware scheduler).
    Fix: give the tier more uplinks (or fewer downlinks), remove the explicit port counts so
    clusterplan sizes the tier, or waive the finding for a deliberate taper (say why).
    Example:
        tiers: {leaf: {switch: sonic-th5-64x800, downlinks: 96, uplinks: 32}}   # 3:1
    """
    fab = ctx.topology.fabrics.get("compute")
    if fab is None:
        return
    for tier in fab.tiers:
        ratio = tier.ratio
        if ratio <= 1 + 1e-9:
            continue
        ports = (f"{tier.down_ports} x {tier.down_speed_gbps:g}G down, {tier.up_ports} x {tier.up_speed_gbps:g}G up "
                 f"= {ratio:.3g}:1")
        if tier.taper_declared and tier.taper > 1:
            yield Hit(f"{tier.role} {tier.switch.id}: tapered {ratio:.3g}:1 as declared ({ports}); traffic "
                      "across this tier runs below full bisection", (*tier.path, "oversubscription"))
        else:
            yield Hit(f"{tier.role} {tier.switch.id}: {ports}; a training fabric must be 1:1", tier.path)


def nvlink_placement(ctx: Context) -> Iterator[Hit]:
    """Tensor parallelism (and expert parallelism when it rides NVLink, i.e. TP x EP fits in the domain)
    must fit in and divide the NVLink domain, so that no TP or expert group spans two domains: TP
    all-reduces run every layer, the expert all-to-all every MoE layer.

    Source: shared/docs/domain.md section 2 (TP talks most and must stay inside the NVLink domain).
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


def nvlink_in_rack(ctx: Context) -> Iterator[Hit]:
    """An NVLink domain sits inside its racks: one rack (NVL72), or the pair of adjacent racks an
    NVL36x2 system declares; NVLink runs on copper, which does not reach further.

    Source: shared/docs/domain.md section 2 (NVLink stays on copper inside one rack; 8 GPUs per HGX
    node, 72 per GB200 NVL72 rack); shared/docs/fabric-shapes.md section 6 (NVL36x2: two racks).
    Fix: put a whole NVLink domain (e.g. all 18 NVL72 trays) in each rack, or shrink the domain.
    Example:
        compute: {server: gb200-nvl72-tray, servers_per_rack: 12}   # 48 of a 72-GPU domain per rack
    """
    r = ctx.resolved
    per_server = r.server.gpus
    racks = r.nvlink_domain_racks
    per_rack = ctx.design.compute.servers_per_rack * per_server
    domain = r.nvlink_domain_gpus
    span = per_rack * racks
    if domain > per_server and (span < domain or span % domain):
        where = "a rack holds" if racks == 1 else f"its {racks} racks hold"
        yield Hit(f"the NVLink domain of {domain} GPUs does not fit its racks: {where} {span} GPUs",
                  ("compute", "servers_per_rack"))


def memory_fit(ctx: Context) -> Iterator[Hit]:
    """Per GPU, weights + gradients + optimizer states (by ZeRO stage) + activations (by recompute mode)
    + a reserve must fit in HBM.

    Source: ZeRO (Rajbhandari et al. 2020) 16 bytes per parameter for mixed-precision Adam; activation
    memory from Korthikanti et al. 2022 (shared/docs/estimator-notes.md 2.6).
    Fix: raise TP or PP, use a higher ZeRO stage, or recompute activations.
    Example:
        training: {model: llama3-70b, zero_stage: 0, parallelism: {tp: 8, pp: 1}}   # 168 GB per 80 GB GPU
    """
    t = ctx.training
    model = ctx.resolved.model
    mem = training_memory(model, t, ctx.threshold("memory_reserve_gb"))
    hbm = ctx.resolved.gpu.memory_gb
    if mem.total_gb > hbm:
        yield Hit(f"{mem.total_gb:.1f} GB per GPU > {hbm:g} GB HBM: weights {mem.weights_gb:.1f} + gradients "
                  f"{mem.gradients_gb:.1f} + optimizer {mem.optimizer_gb:.1f} + activations "
                  f"{mem.activations_gb:.1f} + reserve {mem.reserve_gb:.1f} GB", ("training", "parallelism"))


def parallelism_consistency(ctx: Context) -> Iterator[Hit]:
    """TP x PP x DP x CP is the number of GPUs used and must not exceed the GPUs present; layers divide by
    PP x virtual stages; attention and KV heads divide by TP; the global batch divides by DP x micro-batch;
    EP divides the experts and the DP x CP ranks.

    Source: Megatron-LM argument checks (Narayanan et al. 2021; Korthikanti et al. 2022).
    Fix: change the degrees so the products and divisions come out whole.
    Example:
        training: {global_batch: 250, parallelism: {dp: 32}}   # 250 is not a multiple of 32
    """
    t = ctx.training
    p = t.parallelism
    model = ctx.resolved.model
    used = p.tp * p.pp * p.dp * p.cp
    gpus = ctx.topology.gpus
    base = ("training", "parallelism")
    if used > gpus:
        yield Hit(f"TP {p.tp} x PP {p.pp} x DP {p.dp} x CP {p.cp} = {used} GPUs, but the cluster has {gpus}",
                  (*base, "dp"))
    if model.layers % (p.pp * p.vpp):
        yield Hit(f"{model.layers} layers do not divide into PP {p.pp} x {p.vpp} virtual stages", (*base, "pp"))
    if model.heads % p.tp or (model.kv_heads % p.tp and p.tp % model.kv_heads):
        yield Hit(f"{model.heads} attention heads / {model.kv_heads} KV heads do not divide by TP {p.tp}",
                  (*base, "tp"))
    if t.global_batch % (p.dp * t.micro_batch):
        yield Hit(f"global batch {t.global_batch} is not divisible by DP {p.dp} x micro-batch {t.micro_batch}",
                  ("training", "global_batch"))
    if p.ep > 1:
        experts = model.moe.experts if model.moe else 1
        if experts % p.ep or (p.dp * p.cp) % p.ep:
            yield Hit(f"EP {p.ep} must divide the {experts} experts and DP x CP = {p.dp * p.cp}", (*base, "ep"))


def bandwidth_per_gpu(ctx: Context) -> Iterator[Hit]:
    """A training compute fabric gives each GPU at least 400 Gb/s (warning below), never under 100 Gb/s
    (error); one compute NIC per GPU.

    Source: shared/docs/domain.md section 1 (400 Gb/s per GPU is standard; 25-100 Gb/s is inference
    class); DGX SuperPOD RA (8 x NDR400 per DGX H100).
    Fix: use servers with one 400G compute NIC per GPU.
    Example:
        compute: {server: pcie-l40s-8gpu}   # 4 x 200G for 8 GPUs = 100 Gb/s per GPU
    """
    fab = ctx.resolved.fabrics.get("compute")
    gpus = ctx.resolved.server.gpus
    per_gpu = fab.links_per_server * fab.nic_speed_gbps / gpus if fab else 0.0
    path = ("compute", "server")
    if per_gpu < ctx.threshold("training_bw_per_gpu_error_gbps"):
        yield Hit(f"{per_gpu:g} Gb/s of compute fabric per GPU; training needs at least "
                  f"{ctx.threshold('training_bw_per_gpu_warn_gbps'):g}", path)
    elif per_gpu < ctx.threshold("training_bw_per_gpu_warn_gbps"):
        yield Hit(f"{per_gpu:g} Gb/s of compute fabric per GPU, below the "
                  f"{ctx.threshold('training_bw_per_gpu_warn_gbps'):g} Gb/s standard", path, severity="warning")
    if fab and fab.links_per_server and fab.links_per_server != gpus:
        yield Hit(f"{fab.links_per_server} compute NIC ports for {gpus} GPUs per server; the standard is one "
                  "per GPU", path, severity="warning")


def rail_alignment(ctx: Context) -> Iterator[Hit]:
    """In a rail-optimized fabric NIC i of every server lands on the rail-i leaf, so same-rank GPUs of
    different servers are one hop apart.

    Source: DGX SuperPOD RA "Compute Fabric" (rail-aligned SUs); Juniper JVD rail-optimized design.
    Fix: cable NIC i to rail i (remove `nic_to_rail` or make it 0, 1, 2, ...).
    Example:
        fabrics: {compute: {topology: rail-optimized, nic_to_rail: [0, 1, 2, 3, 4, 5, 7, 6]}}
    """
    for name, fab in ctx.design.fabrics:
        if fab is None or fab.topology != "rail-optimized" or fab.nic_to_rail is None:
            continue
        for i, rail in enumerate(fab.nic_to_rail):
            if rail != i:
                yield Hit(f"NIC {i} is cabled to rail {rail}; a rail-optimized fabric puts NIC {i} on rail {i}",
                          ("fabrics", name, "nic_to_rail", i))


def checkpoint_storage(ctx: Context) -> Iterator[Hit]:
    """A training cluster has a parallel file system, and a full checkpoint (bf16 weights plus fp32
    master weights and Adam states, 14 bytes per parameter) writes within the target time at the
    storage write bandwidth.

    Source: shared/docs/domain.md section 1 (frequent checkpoints: local NVMe + parallel file system);
    ZeRO paper (12 bytes of fp32 optimizer state per parameter).
    Fix: add `storage: {type: parallel-fs, write_gbytes_s: ...}` with enough write bandwidth.
    Example:
        storage: {type: parallel-fs, write_gbytes_s: 0.1}   # a 112 GB checkpoint takes 19 minutes
    """
    storage = ctx.design.storage
    t = ctx.training
    if storage is None or storage.type != "parallel-fs":
        yield Hit("no parallel file system for checkpoints and datasets", ("storage",) if storage else ("kind",))
        return
    if storage.write_gbytes_s is None:
        yield Hit("storage write bandwidth is not given; checkpoint time cannot be checked", ("storage", "type"),
                  severity="warning")
        return
    size_gb = ctx.resolved.model.params_b * (precision_bytes("bf16") + 12)
    seconds = size_gb / storage.write_gbytes_s
    target = t.checkpoint.write_target_s if t.checkpoint else ctx.threshold("checkpoint_write_target_s")
    if seconds > target:
        yield Hit(f"a {size_gb:,.0f} GB checkpoint takes {seconds:,.0f} s at {storage.write_gbytes_s:g} GB/s, "
                  f"over the {target:g} s target", ("storage", "write_gbytes_s"))


def spine_resilience(ctx: Context) -> Iterator[Hit]:
    """Enough spines that losing one keeps the fabric usable: reference designs use at least 4.

    Source: DGX SuperPOD RA-11333-001 Table 4 (4 spines at 1 SU, 16 at 4 SU).
    Fix: spread the leaf uplinks over at least 4 spines.
    Example:
        tiers: {spine: {switch: sonic-th5-64x800, count: 2}}
    """
    fab = ctx.topology.fabrics.get("compute")
    spine = fab.tier("spine") if fab else None
    if spine is not None and spine.count < ctx.threshold("min_spines"):
        yield Hit(f"{spine.count} spine switch(es): one failure removes {100 / spine.count:.0f}% of the "
                  f"bisection; use at least {ctx.threshold('min_spines'):g}", ("fabrics", "compute", "tiers", "spine"))
