"""Build a topology straight from a design given as a dict (no file): for sizing and property tests."""

from __future__ import annotations

from typing import Any

import yaml

from validator.derive.estimate.setup import TrainingSetup
from validator.expand.topology import Topology, build_topology
from validator.read.design_file import parse_design
from validator.resolve.catalog import builtin_catalog
from validator.resolve.resolved import resolve


def topology_of(design: dict[str, Any]) -> Topology:
    loaded, model = parse_design(yaml.safe_dump(design, sort_keys=False), "built.yaml")
    return build_topology(resolve(model, loaded, builtin_catalog()))


def training(compute: dict[str, Any], fabric: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A minimal training design around one compute fabric (no other fabric, no storage)."""
    gpus = 8 * compute["count"]
    return {
        "apiVersion": "clusterplan/v1", "kind": "TrainingCluster", "metadata": {"name": "built"},
        "site": {"rack": {"model": "rack-48u", "power_budget_kw": 200, "cooling": "liquid",
                          "cdu": "cdu-row-2500"}},
        "compute": compute,
        "fabrics": {"compute": fabric, **extra.pop("fabrics", {})},
        "training": {"model": "llama3-8b", "parallelism": {"tp": 8, "dp": max(1, gpus // 8)},
                     "sequence_length": 8192, "global_batch": max(1, gpus // 8)},
        **extra,
    }


def training_setup(**kw: Any) -> TrainingSetup:
    """A training estimator setup: Llama 3 8B on H100 SXM, TP1 PP1 DP8, 8K sequences, batch 64 in micro-batches
    of 1, with `kw` replacing any of these."""
    catalog = builtin_catalog()
    base: dict[str, Any] = dict(model=catalog.model("llama3-8b"), gpu=catalog.gpu("h100-sxm"), tp=1, pp=1, dp=8,
                                seq=8192, global_batch=64, micro_batch=1)
    base.update(kw)
    return TrainingSetup(**base)
