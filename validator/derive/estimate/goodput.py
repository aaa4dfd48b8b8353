"""Goodput and time-to-train (first-order checkpoint/restart model, Young 1974 / Daly 2006).

With interruptions at rate lambda per hour for the whole job (per-GPU rate x GPUs), a blocking
checkpoint of delta hours every tau hours of training, and R hours to restart (reschedule + read the
checkpoint back), each hour of useful training costs on average

    1 + delta/tau + lambda (R + (tau + delta)/2)

hours of wall clock: the checkpoint writes, and per interruption the restart plus, on average, half
an interval of lost work. Goodput is the inverse. Without a declared interval the estimator uses
Young's optimum tau = sqrt(2 delta / lambda). Time-to-train = ideal time / goodput.
"""

from __future__ import annotations

import math

from validator.base.facts import fact
from validator.base.tables import reliability as reliability_table


@fact
class GoodputInputs:
    gpus: int
    interruptions_per_gpu_hour: float
    checkpoint_gb: float
    write_gbytes_s: float | None      # storage write bandwidth (None: not given)
    read_gbytes_s: float | None
    restart_minutes: float
    interval_minutes: float | None    # declared checkpoint interval (None: Young's optimum)
    async_save: bool = False


@fact
class Goodput:
    goodput: float                 # useful training time / wall-clock time
    interruptions_per_day: float
    checkpoint_write_s: float      # full write at the storage bandwidth
    checkpoint_blocking_s: float   # what the training waits for per checkpoint
    interval_minutes: float
    restart_minutes: float         # restart + checkpoint read
    lost_hours_per_interruption: float
    checkpoint_gb: float           # one full checkpoint (weights, master weights, optimizer states)


def reliability(name: str) -> float:
    return float(getattr(reliability_table(), name))


def goodput(g: GoodputInputs) -> Goodput | None:
    """None when the storage write bandwidth is unknown (the checkpoint cost cannot be computed)."""
    if not g.write_gbytes_s:
        return None
    lam = g.interruptions_per_gpu_hour * g.gpus                     # per hour
    write_s = g.checkpoint_gb / g.write_gbytes_s
    blocking_s = write_s * (reliability("async_checkpoint_blocking_share") if g.async_save else 1.0)
    delta = blocking_s / 3600
    read_s = g.checkpoint_gb / (g.read_gbytes_s or g.write_gbytes_s)
    restart = g.restart_minutes / 60 + read_s / 3600
    if g.interval_minutes:
        tau = g.interval_minutes / 60
    else:
        tau = math.sqrt(2 * delta / lam) if lam > 0 and delta > 0 else 24.0
    overhead = (delta / tau if tau > 0 else 0.0) + lam * (restart + (tau + delta) / 2)
    return Goodput(goodput=1 / (1 + overhead), interruptions_per_day=lam * 24, checkpoint_write_s=write_s,
                   checkpoint_blocking_s=blocking_s, interval_minutes=tau * 60, restart_minutes=restart * 60,
                   lost_hours_per_interruption=restart + (tau + delta) / 2, checkpoint_gb=g.checkpoint_gb)
