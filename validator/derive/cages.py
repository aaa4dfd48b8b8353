"""Cages: the physical socket every link end plugs into, numbered over the whole design.

Every end of every link sits in one cage of its device, at one lane of it:

- a switch port: the cage its logical port is laid out in (`validator.expand.ports`, `PortSlot.first_cage`);
  lanes = the logical ports one cage gives at the link's speed (a twin-port OSFP at 400G: 2, at 200G: 4);
- a server: its links to a fabric are numbered NIC by NIC, and one cage carries `ports_per_cage` of them at
  the fabric's speed (the catalog's cage sharing times the NIC's breakout: a DGX H100 cage carries two CX-7
  ports, a ConnectX-8 cage its two 400GbE planes);
- storage nodes and appliances (UFM, ...): one single-port cage per port;
- a management port (BMC, switch, rack system): one RJ45 jack.

A cage is one integer: each (fabric, role) owns a block of ids, devices x cages per device, so the cage of a
link end is arithmetic, not a lookup table. What goes in a cage (one transceiver or one cable plug) is kept
per cage id (`validator.derive.cabling`), so a plan with two modules in one cage cannot be written down.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from validator.base.facts import fact
from validator.derive.media import ANY_CAGE, Cage
from validator.expand.topology import SWITCH_ROLES, Topology


@fact
class CageBlock:
    """The cages of one role on one fabric: ids `start` .. `start + devices * per_device - 1`."""

    start: int
    devices: int
    per_device: int
    lanes: int            # links one cage carries (switches: per slot, see `CageIndex.end`)
    form: Cage            # form factor and top (switches: per port group)
    node: bool            # an adapter end (server, storage, appliance), not a switch


class CageIndex:
    """Maps a link end (fabric, role, device index, port) to its cage id, lanes and cage type."""

    def __init__(self, topology: Topology, node_form: dict[str, Cage]) -> None:
        self.topology = topology
        self.node_form = node_form      # fabric -> the server's NIC cage on it
        self.blocks: dict[tuple[str, str], CageBlock] = {}
        self.size = 0

    def block(self, fabric: str, role: str) -> CageBlock:
        key = (fabric, role)
        found = self.blocks.get(key)
        if found is None:
            devices, per_device, lanes, form, node = self._shape(fabric, role)
            found = self.blocks[key] = CageBlock(self.size, devices, per_device, lanes, form, node)
            self.size += devices * per_device
        return found

    def end(self, fabric: str, role: str, index: int, port: int | str) -> tuple[int, int, Cage]:
        """(cage id, lanes of that cage, cage type) of one link end."""
        return self.resolver(fabric, role)(index, port)

    def resolver(self, fabric: str, role: str) -> Callable[[int, int | str], tuple[int, int, Cage]]:
        """`end` for one role on one fabric, with what it needs worked out once (the hot path of the plan)."""
        block = self.block(fabric, role)
        start, per = block.start, block.per_device
        if role in SWITCH_ROLES:
            tier = self.topology.fabrics[fabric].tier(role)
            assert tier is not None
            groups = tier.switch.port_groups
            slots = [(s.first_cage, s.per_cage, (groups[s.group].form_factor, groups[s.group].top))
                     for s in tier.layout.slots]

            def switch_end(index: int, port: int | str) -> tuple[int, int, Cage]:
                cage, lanes, form = slots[int(port) - 1]
                return start + index * per + cage, lanes, form
            return switch_end
        lanes, form = block.lanes, block.form
        by_lane = role == "server" and lanes > 1
        by_port = per > 1

        def node_end(index: int, port: int | str) -> tuple[int, int, Cage]:
            if isinstance(port, int) and by_lane:
                cage = (port - 1) // lanes
            elif isinstance(port, int) and by_port:
                cage = port - 1
            else:
                cage = 0
            return start + index * per + cage, lanes, form
        return node_end

    def arrays(self, fabric: str, role: str, index: npt.NDArray[np.int64], port: npt.NDArray[np.int64]
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[tuple[int, Cage]]]:
        """`end` for many ends of one role at once (integer ports): (cage ids, cage type per end, the types as
        (lanes, cage))."""
        block = self.block(fabric, role)
        first = index * block.per_device
        first += block.start
        if role in SWITCH_ROLES:
            tier = self.topology.fabrics[fabric].tier(role)
            assert tier is not None
            groups = tier.switch.port_groups
            types: list[tuple[int, Cage]] = []
            of_port = [0]           # by port number (1-based), so the ports need no shifting
            cage = [0]
            for s in tier.layout.slots:
                t = (s.per_cage, (groups[s.group].form_factor, groups[s.group].top))
                if t not in types:
                    types.append(t)
                of_port.append(types.index(t))
                cage.append(s.first_cage)
            first += np.array(cage, dtype=np.int64)[port]
            return first, np.array(of_port, dtype=np.int64)[port], types
        lanes = block.lanes
        if role == "server" and lanes > 1:
            first = first + (port - 1) // lanes
        elif block.per_device > 1:
            first = first + port - 1
        return first, np.zeros(len(index), dtype=np.int64), [(lanes, block.form)]

    def _shape(self, fabric: str, role: str) -> tuple[int, int, int, Cage, bool]:
        """(devices, cages per device, lanes per cage, cage type, adapter end) of a role on a fabric."""
        t = self.topology
        if role in SWITCH_ROLES:
            fab = t.fabrics[fabric]
            tier = fab.tier(role)
            assert tier is not None
            return fab.count(role), sum(g.cages for g in tier.switch.port_groups), 1, ANY_CAGE, False
        if "/" in role:                        # a switch's management port, one per index
            other, tier_role = role.split("/")
            tier = t.fabrics[other].tier(tier_role)
            per = tier.switch.mgmt_ports if tier and tier.switch.mgmt_ports else 1
            return t.fabrics[other].count(tier_role) * per, 1, 1, ("RJ45", None), False
        if role == "rack-system":
            system = t.resolved.server.rack_system
            per = system.mgmt_ports if system and system.mgmt_ports else 1
            return len(t.racks.gpu_rack_at) * per, 1, 1, ("RJ45", None), False
        if role == "server":
            rf = t.resolved.fabrics.get(fabric)
            links = rf.links_per_server if rf and fabric != "oob" else 1
            lanes = max(1, min(rf.ports_per_cage if rf and fabric != "oob" else 1, links))
            return t.servers, max(1, math.ceil(links / lanes)), lanes, self.node_form.get(fabric, ANY_CAGE), True
        return self._appliance(fabric, role)

    def _appliance(self, fabric: str, role: str) -> tuple[int, int, int, Cage, bool]:
        """Storage nodes and the design's extra endpoints: single-port adapter cages of unknown type."""
        design = self.topology.resolved.design
        if role == "storage":
            nodes = design.storage.nodes if design.storage else None
            count = nodes.count if nodes else 0
            ports = nodes.ports if nodes and fabric == "storage" else 1
            return count, ports, 1, ANY_CAGE, True
        spec = getattr(design.fabrics, fabric)
        for e in spec.extra_endpoints if spec else ():
            if e.name == role:
                return e.count, e.ports, 1, ANY_CAGE, True
        raise ValueError(f"no cages for role {role!r} on fabric {fabric!r}")
