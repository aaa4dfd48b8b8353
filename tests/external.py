"""Programs from outside PyPI that some tests drive (Graphviz, Chromium; `.ci/run` installs both). Without
one the test is skipped, unless CLUSTERPLAN_NO_SKIP is set (as CI may), when it fails instead."""

from __future__ import annotations

import os
import shutil

import pytest


def need(*names: str) -> str:
    """Path of the first of `names` on PATH; skip (or fail under CLUSTERPLAN_NO_SKIP) when none is."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    message = f"{' or '.join(names)} is not installed (.ci/run installs it)"
    if os.environ.get("CLUSTERPLAN_NO_SKIP"):
        pytest.fail(message)
    pytest.skip(message)
    raise AssertionError("unreachable")
