"""Serving constants on a GPU with no set for its architecture (AMD MI300X / MI355X, L40S, L4: no public
serving run in tests/reference/) are borrowed from `serving.default_family` of
validator/data/efficiency.yaml; the estimate says so instead of passing them off as calibrated."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.builders import topology_of
from tests.helpers import FIXTURES
from validator.base.estimate_tables import efficiency
from validator.derive.estimate import estimate
from validator.derive.estimate.engine import serving_constants

BASE = yaml.safe_load((FIXTURES / "valid" / "small-inference.yaml").read_text())


@pytest.mark.parametrize("gpu", ["mi300x", "mi355x", "l40s", "l4"])
def test_gpus_of_other_architectures_are_uncalibrated(gpu):
    c = serving_constants(gpu)
    assert not c.calibrated
    assert c.family == efficiency().serving.default_family     # borrowed, not their own


@pytest.mark.parametrize("gpu", ["h100-sxm", "h200-sxm", "h800-sxm", "b200", "gb200"])
def test_fitted_architectures_are_calibrated(gpu):
    assert serving_constants(gpu).calibrated


def _estimate(server: str) -> dict:
    design = copy.deepcopy(BASE)
    design["compute"]["server"] = server
    return estimate(topology_of(design)).as_dict()


def test_mi300x_estimate_is_marked_uncalibrated():
    est = _estimate("xe9680-mi300x")
    assert est["assumptions"]["constants_calibrated"] is False
    assert any("UNCALIBRATED for mi300x" in why for why in est["trust"]["outside_fit"])


def test_h200_estimate_is_not_marked():
    est = _estimate("dgx-h200")
    assert est["assumptions"]["constants_calibrated"] is True
    assert not any("UNCALIBRATED" in why for why in est["trust"]["outside_fit"])
