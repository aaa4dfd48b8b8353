"""A fabric as the expand stage sees it: its size (planes, tiers, groups) and the names of its switches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from validator.base.facts import fact
from validator.expand.sizing import FabricSize, PlaneSize, Problem, TierSize

SWITCH_ROLES = ("leaf", "spine", "core")


@fact
class Zone:
    """One zone of a zoned fabric (the out-of-band network of a large site): its own plane and the
    index of its first leaf, spine and core among the fabric's."""

    plane: PlaneSize
    leaf_base: int
    spine_base: int
    core_base: int


@dataclass
class FabricTopology:
    name: str
    type: str
    topology: str
    speed_gbps: float
    size: FabricSize
    links_per_server: int
    extra_links: int          # appliance links per plane: storage nodes, extra endpoints, management ports
    zones: tuple[Zone, ...] = ()   # zones of their own (out-of-band at scale); none: one plane shape

    def zone_planes(self) -> tuple[Zone, ...]:
        """The zones to link tier by tier (one for a fabric without zones; planes are separate)."""
        return self.zones or (Zone(self.plane, 0, 0, 0),)

    @property
    def plane(self) -> PlaneSize:
        return self.size.plane

    @property
    def planes(self) -> int:
        return self.size.planes

    @property
    def tiers(self) -> tuple[TierSize, ...]:
        return self.plane.tiers

    def tier(self, role: str) -> TierSize | None:
        return self.plane.tier(role)

    def count(self, role: str) -> int:
        """Switches of a tier over every plane."""
        tier = self.tier(role)
        return tier.count * self.planes if tier else 0

    @property
    def switches(self) -> int:
        return sum(t.count for t in self.tiers) * self.planes

    @property
    def buildable(self) -> bool:
        return not self.size.fatal

    @property
    def problems(self) -> list[Problem]:
        return self.size.problems

    def namer(self, role: str) -> Callable[[int], str]:
        """Name of switch `index` of a tier, counted over every plane (plane-major)."""
        tier = self.tier(role)
        per_plane = tier.count if tier else 1
        prefix = self.name
        plane_tag: Callable[[int], str] = (lambda p: f"-p{p + 1}") if self.planes > 1 else (lambda p: "")
        if role == "leaf" and self.topology == "rail-optimized" and self.plane.rails > 1:
            shape = self.plane
            per_su = shape.rails * shape.leaves_per_rail
            group = shape.leaves_per_rail

            def rail_leaf(i: int) -> str:
                p, j = divmod(i, per_plane)
                if j >= shape.server_leaves:
                    return f"{prefix}{plane_tag(p)}-leaf-x{j - shape.server_leaves + 1:03d}"
                su, k = divmod(j, per_su)
                rail, r = divmod(k, group)
                member = f"-{r + 1}" if group > 1 else ""
                return f"{prefix}{plane_tag(p)}-leaf-su{su + 1:03d}-rail{rail + 1}{member}"

            return rail_leaf

        def plain(i: int) -> str:
            p, j = divmod(i, per_plane)
            return f"{prefix}{plane_tag(p)}-{role}{j + 1:04d}"

        return plain

    def names(self, role: str) -> Iterator[str]:
        namer = self.namer(role)
        for i in range(self.count(role)):
            yield namer(i)
