"""The most the plugs in a device's ports can draw, for packing network racks (the expand stage).

Media are chosen per link later (`validator.derive.media`), by length and cage; a rack is packed
before that. So the rack plan fills a rack's power budget with each device's own power plus this
allowance: per port in use, the heaviest catalog part a port at that speed can take at that end (a
transceiver's power over its ports, where the device's own figure leaves its optics out) or its end
of the heaviest active cable at that speed (half a cable's power over its links). What the chosen
media then draw (`validator.derive.rack_power`) stays within it.
"""

from __future__ import annotations

from validator.expand.sizing import TierSize
from validator.resolve.catalog import Catalog


class PortPower:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._cache: dict[tuple[float, str, bool], float] = {}

    def per_port(self, speed: float, end: str, modules: bool) -> float:
        """W one port at `speed` may draw for its plug: module share (if `modules`) or active cable end."""
        key = (speed, end, modules)
        found = self._cache.get(key)
        if found is None:
            entries = self.catalog.entries
            best = 0.0
            if modules:
                best = max((t.power_w / t.ports for t in entries["transceiver"].values()
                            if t.speed_gbps == speed and t.end in (end, "any") and t.power_w), default=0.0)
            cable = max((c.power_w / c.links_per_cable / 2 for c in entries["cable"].values()
                         if c.speed_gbps == speed and c.power_w), default=0.0)
            found = self._cache[key] = max(best, cable)
        return found

    def switch(self, tier: TierSize) -> float:
        """Allowance of one switch of a tier: its ports in use, down and up."""
        modules = not (tier.switch.power_max_w and tier.switch.power_max_includes_optics)
        return (tier.down_ports * self.per_port(tier.down_speed_gbps, "switch", modules)
                + tier.up_ports * self.per_port(tier.up_speed_gbps, "switch", modules))

    def node(self, speed: float, ports: int) -> float:
        """Allowance of a storage node or appliance with `ports` links at `speed`."""
        return ports * self.per_port(speed, "node", True)
