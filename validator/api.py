"""clusterplan's supported Python API (docs/api.md): what the command line does, callable from a program.

    from validator.api import analyze, estimate, bom, render

    analysis = analyze("designs/superpod-h100-4su.yaml")
    analysis.passed                     # no unwaived error finding
    estimate(analysis)["mfu"]           # the same dict `clusterplan estimate --format json` prints
    bom(analysis)["totals"]["capex_usd"]
    render(analysis, "out/")            # switch configurations, BOM and cabling plan, as `clusterplan render`

The names exported here are stable within a major version; everything else in the package is internal and
may change in any release. The dicts follow the versioned JSON schemas in schemas/ (estimate, bom, report).
A design that cannot be read is not an exception for `analyze` (its findings say why); `load` and the
functions that need a readable design raise `DesignError` with every problem and its line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from validator import __version__
from validator.base.errors import DesignError, ToolError
from validator.base.facts import fact
from validator.base.findings import Finding
from validator.check.result import Analysis
from validator.expand.topology import Topology
from validator.read.config import RunConfig

__all__ = ["DesignError", "Finding", "Result", "ToolError", "Topology", "__version__", "analyze", "bom",
           "config", "estimate", "load", "render"]

PathLike = str | os.PathLike[str]


@fact
class Result:
    """One analysed design: its findings and, when it could be read, its topology and derived facts."""

    analysis: Analysis
    path: Path

    @property
    def file(self) -> str:
        return self.analysis.file

    @property
    def findings(self) -> list[Finding]:
        return list(self.analysis.findings)

    @property
    def readable(self) -> bool:
        """The design was read and expanded (else its findings are reading errors and nothing else exists)."""
        return self.analysis.topology is not None

    @property
    def passed(self) -> bool:
        """No unwaived error finding (what `clusterplan validate` exits 0 on by default)."""
        return not any(f.severity == "error" and not f.waived for f in self.analysis.findings)

    @property
    def topology(self) -> Topology:
        """The expanded topology; ToolError naming the reading errors when the design could not be read."""
        return _readable(self, None).topology or _unreachable()


def _unreachable() -> Topology:
    raise AssertionError("a readable analysis has a topology")


def config(path: PathLike | None = None, prices: list[PathLike] | None = None) -> RunConfig:
    """A run's configuration: a `.clusterplan.yaml` (severities, waivers, TCO settings, price books) and
    extra price books. Without arguments: the defaults, as if the repository had no configuration file."""
    from validator.check.registry import RULES
    from validator.read.config import load_config

    books = tuple(Path(p) for p in prices or ())
    if path is None:
        return RunConfig(price_files=books)
    found = Path(path)
    return RunConfig(load_config(found, [r.id for r in RULES]), found, price_files=books)


def load(design: PathLike, run: RunConfig | None = None) -> Topology:
    """read -> resolve -> expand: the design's topology (fabrics sized, racks planned). Raises DesignError."""
    from validator.pipeline import load_topology

    return load_topology(Path(design), run=run)


def analyze(design: PathLike, run: RunConfig | None = None) -> Result:
    """Every rule over the design, as `clusterplan validate` runs them; never raises for a bad design."""
    from validator.pipeline import analyze as run_pipeline

    return Result(run_pipeline(Path(design), run=run), Path(design))


def _readable(design: PathLike | Result, run: RunConfig | None) -> Analysis:
    result = design if isinstance(design, Result) else analyze(design, run)
    analysis = result.analysis
    if analysis.topology is None or analysis.derived is None:
        why = "; ".join(f"line {f.line}: {f.rule} {f.message}" for f in analysis.findings[:5])
        raise ToolError(f"{analysis.file}: the design could not be read ({why})")
    return analysis


def estimate(design: PathLike | Result, run: RunConfig | None = None) -> dict[str, Any]:
    """The performance estimate: `clusterplan estimate --format json` as a dict (schemas/estimate.schema.json)."""
    derived = _readable(design, run).derived
    assert derived is not None
    result: dict[str, Any] = derived.estimate.as_dict()
    return result


def bom(design: PathLike | Result, run: RunConfig | None = None) -> dict[str, Any]:
    """The bill of materials with power and TCO: `clusterplan bom --format json` as a dict
    (schemas/bom.schema.json)."""
    derived = _readable(design, run).derived
    assert derived is not None
    result: dict[str, Any] = derived.bom.as_dict()
    return result


def render(design: PathLike | Result, out_dir: PathLike, *, force: bool = False,
           run: RunConfig | None = None) -> list[str]:
    """Write the switch configurations, BOM and cabling plan under `out_dir` as one set (as `clusterplan
    render`, with the design's own `templates:` directory if it names one); returns the files written. A
    design with error findings raises ToolError unless `force`."""
    from validator.emit.render import render_all, user_templates

    result = design if isinstance(design, Result) else analyze(design, run)
    analysis = _readable(result, run)
    errors = [f for f in analysis.findings if f.severity == "error" and not f.waived]
    if errors and not force:
        raise ToolError(f"{analysis.file} has {len(errors)} error finding{'s' * (len(errors) != 1)}: nothing is "
                        "written for a design that fails validation (fix it, or pass force=True)")
    assert analysis.topology is not None
    return render_all(analysis, Path(out_dir), user_templates(result.path, analysis.topology.resolved.design.templates))
