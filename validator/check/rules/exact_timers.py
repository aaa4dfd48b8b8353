"""NET013 exact-timers: The PFC watchdog reaches every switch OS exactly."""

from __future__ import annotations

from collections.abc import Iterator

from validator.base.tables import values
from validator.check.base import Hit, Rule
from validator.check.context import Context
from validator.derive.switch_os import watchdog_timers


def exact_timers(ctx: Context) -> Iterator[Hit]:
    """Every PFC watchdog timer the design sets must reach each switch's OS as it is written, not
    rounded: a 250 ms detection time set as 100 ms x 3 on Cumulus Linux acts after 300 ms while the
    design says 250. Each OS has its own grid: SONiC takes 100-5000 ms (restoration 100-60000 ms),
    Arista EOS seconds with two decimals (10 ms steps), NVUE polling-interval x robustness
    (100-5000 ms x 1-1000) and no restoration setting at all. A timer off the grid is refused with
    the nearest values the OS can take; a restoration time on Cumulus Linux is a warning (it cannot
    be set; Cumulus restores the queue when the storm stops).

    Source: sonic-pfcwd.yang (detection_time, restoration_time ranges); pyavd eos_cli_config_gen
    schema (priority_flow_control.watchdog); Cumulus Linux 5.14 NVUE object model (qos pfc-watchdog).
    Fix: set `pfc_watchdog.detection_ms` / `restoration_ms` to one of the nearest values given.
    Example:
        fabrics: {compute: {lossless: {switch: {pfc_watchdog: {detection_ms: 50}}}}}
    """
    defaults = values("sonic_qos.yaml")
    for name, spec in ctx.design.fabrics:
        if spec is None or spec.lossless is None or spec.type == "infiniband":
            continue
        wd = spec.lossless.switch.pfc_watchdog
        fab = ctx.topology.fabrics.get(name)
        if wd is None or not wd.enabled or fab is None:
            continue
        detection = int(wd.detection_ms or defaults["pfcwd_detection_ms"])
        restoration = int(wd.restoration_ms or defaults["pfcwd_restoration_ms"])
        base = ("fabrics", name, "lossless", "switch", "pfc_watchdog")
        for os in sorted({t.switch.os for t in fab.tiers} - {"opensm"}):
            timers = watchdog_timers(os, detection, restoration, wd.restoration_ms is not None)
            for problem in timers.problems:
                restoring = "restoration" in problem
                key = "restoration_ms" if restoring else "detection_ms"
                field = key if getattr(wd, key) is not None else "enabled"
                yield Hit(f"{name}: {problem}", (*base, field),
                          severity="warning" if restoring and os == "cumulus" else None)


RULE = Rule("NET013", "exact-timers", "The PFC watchdog reaches every switch OS exactly", "error", "all",
            exact_timers)
