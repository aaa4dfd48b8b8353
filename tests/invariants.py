"""Port truth, checked on the cabling plan itself (the link tuples every output reads).

- no port of any device is used twice (switch ports, server ports, management ports);
- no switch carries more links than its tier's port layout holds, and every port number it uses
  exists in that layout (so the cage and breakout behind it exist on the switch);
- where the sizing reports no striping problem, every connected switch pair between two tiers carries
  the same number of links;
- each tier's port bandwidth, down over up, is within the taper the design asked for, and every
  server link of every server is in the plan exactly once.
"""

from __future__ import annotations

from collections import Counter

from validator.derive.links import link_tuples
from validator.expand.fabric import FabricTopology
from validator.expand.topology import Topology


def check_port_truth(topology: Topology) -> dict[str, Counter[tuple[str, str]]]:
    """Assert the invariants on every fabric; returns the links per switch-pair tier for the caller."""
    pairs_by_fabric: dict[str, Counter[tuple[str, str]]] = {}
    for name, fab in topology.fabrics.items():
        if not fab.buildable:
            continue
        used: set[tuple[str, int, object]] = set()
        switch_ends: list[tuple[str, int]] = []             # one entry per link end on a switch
        pair_links: list[tuple[str, int, str, int]] = []    # one entry per switch-to-switch link
        server_links = 0
        tiers = {role: fab.tier(role) for role in {t.role for t in fab.tiers}}
        slotted: set[tuple[str, object]] = set()     # (role, port) whose cage was looked up already
        for a_role, a_idx, a_port, z_role, z_idx, z_port, _speed in link_tuples(topology, name):
            a_key, z_key = (a_role, a_idx, a_port), (z_role, z_idx, z_port)
            assert a_key not in used, f"{name}: port used twice: {a_key}"
            assert z_key not in used, f"{name}: port used twice: {z_key}"
            used.add(a_key)
            used.add(z_key)
            tier = tiers.get(z_role)
            assert tier is not None
            assert 1 <= z_port <= tier.down_ports, f"{name}: {z_role} {z_idx} port {z_port} > {tier.down_ports} down"
            if (z_role, z_port) not in slotted:    # the port exists in a cage of the switch
                tier.layout.slot(z_port)
                slotted.add((z_role, z_port))
            switch_ends.append((z_role, z_idx))
            if a_role in ("leaf", "spine", "core"):
                lower = tiers.get(a_role)
                assert lower is not None and isinstance(a_port, int)
                assert lower.down_ports < a_port <= lower.down_ports + lower.up_ports
                if (a_role, a_port) not in slotted:
                    lower.layout.slot(a_port)
                    slotted.add((a_role, a_port))
                switch_ends.append((a_role, a_idx))
                pair_links.append((a_role, a_idx, z_role, z_idx))
            elif a_role == "server":
                server_links += 1
        per_switch = Counter(switch_ends)
        pairs = Counter(pair_links)
        for (role, idx), n in per_switch.items():
            tier = fab.tier(role)
            assert tier is not None
            assert n <= tier.down_ports + tier.up_ports, f"{name}: {role} {idx} carries {n} links"
            assert n <= tier.switch.ports_at(tier.down_speed_gbps) + tier.switch.ports_at(tier.up_speed_gbps)
        assert server_links == topology.servers * topology.resolved.fabrics[name].links_per_server
        striping = any(p.rule == "NET006" for p in fab.problems)
        by_tier, own = _pair_counts(fab, pairs)
        if not striping:
            for key, counts in by_tier.items():
                assert len(counts) == 1, f"{name}: {key} pairs carry unequal link counts {sorted(counts)}"
            for leaf, counts in own.items():
                assert len(counts) == 1, f"{name}: leaf {leaf} stripes its uplinks unevenly {sorted(counts)}"
        for tier in fab.tiers:
            if tier.up_ports:
                assert tier.down_ports * tier.down_speed_gbps <= tier.up_ports * tier.up_speed_gbps * tier.taper + 1e-6
        pairs_by_fabric[name] = Counter({k: len(v) for k, v in by_tier.items()})
    return pairs_by_fabric


def _pair_counts(fab: FabricTopology, pairs: Counter[tuple[str, int, str, int]]
                 ) -> tuple[dict[tuple[str, str], set[int]], dict[int, set[int]]]:
    """Link counts per switch pair, by tier pair; a leaf (or a spine of a three-tier pod) with fewer uplinks than
    its tier (fewer downlinks in use, validator/expand/growth.py) by itself: even over the switches it reaches,
    fewer links than the others."""
    by_tier: dict[tuple[str, str], set[int]] = {}
    own: dict[int, set[int]] = {}
    plane = fab.plane
    for (a_role, a, z_role, _z), n in pairs.items():
        if a_role == "leaf" and plane.partial_ups and a % plane.leaves >= plane.partial_from:
            own.setdefault(a, set()).add(n)
        elif a_role == "spine" and plane.pod_spine_ups:
            own.setdefault(-1 - a, set()).add(n)     # spines of a pod whose leaves use fewer uplinks
        else:
            by_tier.setdefault((a_role, z_role), set()).add(n)
    return by_tier, own


def check_pairs_match_links(topology: Topology) -> None:
    """The pair-level count (summary and media tally) says what the links say: the same links between the
    same switches, and server links to the same leaves rack by rack."""
    from validator.derive.pairs import link_pairs

    per_rack = topology.racks.servers_per_rack
    for name in topology.fabrics:
        racked = name != "oob"       # server links counted by the first server of their rack
        by_links = Counter((a_role, a_idx - a_idx % per_rack if racked and a_role == "server" else a_idx, z_role, z_idx)
                           for a_role, a_idx, _ap, z_role, z_idx, _zp, _s in link_tuples(topology, name))
        by_pairs: Counter[tuple[str, int, str, int]] = Counter()
        for a_role, a_idx, z_role, z_idx, n, _s in link_pairs(topology, name):
            by_pairs[(a_role, a_idx, z_role, z_idx)] += n
        assert by_links == by_pairs, name
