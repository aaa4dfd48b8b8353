"""The port names where a technician uses them: the cable label sheet (`clusterplan cabling --format labels`)
and the port map of each device in its rack (`clusterplan racks --format ports`).

Both are the cabling plan's rows seen another way, nothing named again: the cable id, the device names and
the interface names (each end in its OS's syntax, as the switch configurations name the port) are the
plan's own cells (`validator.derive.cabling.Plan.rows`, names from `validator.derive.port_names`), so a
label, a rack's port map, the plan and the configurations agree by construction.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable

from validator.derive.cabling import CABLING_COLUMNS, Plan
from validator.derive.elevation import Elevations
from validator.emit.escape import csv_row
from validator.emit.progress import progress

LABEL_COLUMNS = ("cable_id", "fabric", "a_end", "z_end", "a_rack", "a_ru", "z_rack", "z_ru", "cable",
                 "length_class_m")
_COL = {name: i for i, name in enumerate(CABLING_COLUMNS)}


def _end(row: tuple[object, ...], end: str) -> str:
    """One end of a cable as printed on its label: device:interface."""
    return f"{row[_COL[f'{end}_device']]}:{row[_COL[f'{end}_interface']]}"


def label_row(row: tuple[object, ...]) -> tuple[object, ...]:
    """The label of one cabling-plan row: the cable id printed on both ends, with both ends' device:port
    and where each end stands (rack and rack unit), the cable's model and length class."""
    c = _COL
    return (row[c["cable_id"]], row[c["fabric"]], _end(row, "a"), _end(row, "z"), row[c["a_rack"]], row[c["a_ru"]],
            row[c["z_rack"]], row[c["z_ru"]], row[c["cable"]], row[c["length_class_m"]])


def labels_csv_rows(plan: Plan, keep: Callable[[tuple[object, ...]], bool] | None = None) -> Iterable[str]:
    """The label sheet as CSV lines, one per cable, streamed like the plan; `keep` selects plan rows
    (validator.emit.tables.cabling_filter)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LABEL_COLUMNS)
    yield out.getvalue()
    for row in progress(plan.rows(), plan.tally.links, "cable labels"):
        if keep is not None and not keep(row):
            continue
        out.seek(0)
        out.truncate()
        writer.writerow(csv_row(label_row(row)))
        yield out.getvalue()


PortLine = tuple[str, str, str, str, object, str]   # fabric, interface, far device:interface, far rack and RU, cable


def device_ports(plan: Plan) -> dict[str, list[PortLine]]:
    """Every device's cabled ports, in link order: each plan row gives one line to each of its two ends."""
    c = _COL
    ports: dict[str, list[PortLine]] = {}
    for row in plan.rows():
        fabric, cable = str(row[c["fabric"]]), str(row[c["cable_id"]])
        for near, far in (("a", "z"), ("z", "a")):
            ports.setdefault(str(row[c[f"{near}_device"]]), []).append(
                (fabric, str(row[c[f"{near}_interface"]]), _end(row, far), str(row[c[f"{far}_rack"]]),
                 row[c[f"{far}_ru"]], cable))
    return ports


def ports_text(elev: Elevations, plan: Plan) -> str:
    """Each rack top down, each device with the ports cabled at it: the fabric and interface (a server's
    ports are numbered per fabric), what is at the other end (device:interface, rack and rack unit) and
    the cable id on the label."""
    ports = device_ports(plan)
    lines = [f"{elev.name}  {elev.file}", "port map: every cabled port of every device, rack by rack, top down", ""]
    for rack in elev.racks:
        lines.append(f"rack {rack.name}  {rack.kind}  hall H{rack.hall}, row R{rack.row:02d}, "
                     f"position {rack.position:02d}")
        for s in [*rack.slots, *rack.inside]:
            if s.device is None:
                continue
            where = f"U{s.ru_top}" if s.height == 1 else (f"U{s.ru_top}-{s.ru_bottom}" if s.height else "inside")
            cabled = ports.get(s.device, [])
            lines.append(f"  {where:<8} {s.device}  ({s.model or s.role}, {len(cabled)} cabled ports)")
            for fabric, interface, far, far_rack, far_ru, cable in cabled:
                lines.append(f"    {fabric:<9} {interface:<14} -> {far:<44} {far_rack} U{far_ru}  cable {cable}")
        lines.append("")
    return "\n".join(lines)
