"""TRN008 checkpoint-storage: Checkpoints write within the target time."""

from __future__ import annotations

from collections.abc import Iterator

from validator.check.base import Hit, Rule
from validator.check.context import Context


def checkpoint_storage(ctx: Context) -> Iterator[Hit]:
    """A training cluster has a parallel file system, and a full checkpoint (bf16 weights plus fp32
    master weights and Adam states, 14 bytes per parameter) writes within the target time at the
    storage write bandwidth.

    Source: Rajbhandari et al., "ZeRO" (SC 2020): 12 bytes of fp32 optimizer state per parameter;
    NVIDIA DGX SuperPOD RA, Storage Architecture (local NVMe cache plus a parallel file system);
    validator/data/reliability.yaml. The write time also sets the goodput and time-to-train of
    `clusterplan estimate`.
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
    written = ctx.training_report.goodput
    assert written is not None, "goodput is computed whenever the write bandwidth is known"
    size_gb, seconds = written.checkpoint_gb, written.checkpoint_write_s
    target = t.checkpoint.write_target_s if t.checkpoint else ctx.threshold("checkpoint_write_target_s")
    if seconds > target:
        yield Hit(f"a {size_gb:,.0f} GB checkpoint takes {seconds:,.0f} s at {storage.write_gbytes_s:g} GB/s, "
                  f"over the {target:g} s target", ("storage", "write_gbytes_s"))


RULE = Rule("TRN008", "checkpoint-storage", "Checkpoints write within the target time", "warning", "training",
            checkpoint_storage, thresholds=("checkpoint_write_target_s",))
