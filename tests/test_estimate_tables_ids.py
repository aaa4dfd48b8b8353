"""Every GPU an estimator table names is a catalog GPU: a lender or a serving family keyed by an id the
catalog does not have is silently never used (the training lender `h800` once left the catalog's
`h800-sxm` on the uncalibrated prior, and GB300 served with Hopper's constants as the default family)."""

from __future__ import annotations

from validator.base.estimate_tables import efficiency
from validator.resolve.catalog import builtin_catalog


def _catalog_gpus() -> set[str]:
    return set(builtin_catalog().entries["gpu"])


def test_training_sets_and_lenders_name_catalog_gpus():
    gpus, t = _catalog_gpus(), efficiency().training
    # the sets of the harness's own GPU variants (tests/training_runs.py: 40 GB A100, 500 W Grand Teton H100)
    variants = {"a100-40gb-sxm", "h100-96gb-500w"}
    assert {k.split("/")[0] for k in t.sets} <= gpus | variants
    assert set(t.lenders) | set(t.lenders.values()) <= gpus | variants


def test_every_blackwell_gpu_serves_with_blackwell_constants():
    gpus, s = _catalog_gpus(), efficiency().serving
    assert set(s.family) <= gpus
    for gid in ("b200", "b300", "gb200", "gb300"):
        assert s.family[gid] == "blackwell", gid
    assert s.family["h800-sxm"] == "hopper"
