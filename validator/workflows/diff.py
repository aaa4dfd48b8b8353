"""`clusterplan diff`: what a change to a design does to its hardware, power, cost and performance.

Each side is analysed in full (validate, estimate, BOM); the diff compares a flat set of metrics and
the findings (new / fixed, by fingerprint). Gates (`--fail-if 'capex > +10%'`) turn a metric change
into a failing exit code; the capex range's ends are metrics too (`capex_low`, `capex_high`), so a gate
can hold either end.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from validator.base.errors import ToolError
from validator.base.facts import fact
from validator.base.paths import display_name
from validator.check.result import Analysis
from validator.pipeline import analyze
from validator.read.config import RunConfig

# metric -> (label, unit, kind): kind "count" (absolute and %), "ratio" (points), "value" (absolute and %)
METRICS: dict[str, tuple[str, str, str]] = {
    "gpus": ("GPUs", "", "count"), "servers": ("servers", "", "count"), "switches": ("switches", "", "count"),
    "transceivers": ("transceivers", "", "count"), "cables": ("cables", "", "count"),
    "it_kw": ("IT power", "kW", "value"), "facility_kw": ("facility power", "kW", "value"),
    "capex": ("capex (priced lines)", "USD", "value"), "capex_low": ("capex, low end", "USD", "value"),
    "capex_high": ("capex, high end", "USD", "value"), "unpriced_lines": ("unpriced BOM lines", "", "count"),
    "growth_usd": ("of the capex, built for growth", "USD", "value"),
    "gpu_hour_usd": ("cost per busy GPU-hour", "USD", "value"),
    "mfu": ("MFU", "", "ratio"), "tokens_per_s": ("tokens/s", "", "value"), "step_time_s": ("step time", "s", "value"),
    "time_to_train_days": ("time to train", "days", "value"), "ttft_ms": ("TTFT", "ms", "value"),
    "tpot_ms": ("TPOT", "ms", "value"), "max_concurrency": ("max concurrency per replica", "", "count"),
    "output_tokens_per_s_per_gpu": ("output tokens/s per GPU (prefill included)", "", "value"),
    "total_tokens_per_s_per_gpu": ("input + output tokens/s per GPU", "", "value"),
    "replicas_needed": ("replicas needed at the SLOs", "", "count"),
    "prefill_replicas_needed": ("prefill replicas needed at the SLOs", "", "count"),
    "prefill_tokens_per_s_per_gpu": ("prefill input tokens/s per GPU", "", "value"),
    "decode_tokens_per_s_per_gpu": ("decode output tokens/s per GPU", "", "value"),
    "cost_per_million_tokens": ("cost per million output tokens", "USD", "value"),
    "errors": ("errors", "", "count"), "warnings": ("warnings", "", "count"),
}


@dataclass
class Side:
    analysis: Analysis
    metrics: dict[str, float | None]
    # metric -> (low, high): the estimate's interval (validator/derive/estimate/interval.py)
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass
class DesignDiff:
    file: str
    base: Side | None
    head: Side | None
    new_findings: list[Any] = field(default_factory=list)
    fixed_findings: list[Any] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.base is None:
            return "added"
        if self.head is None:
            return "removed"
        changed = any(self.delta(m)[0] not in (None, 0) for m in METRICS) or self.new_findings or self.fixed_findings
        return "changed" if changed else "unchanged"

    def value(self, side: Side | None, metric: str) -> float | None:
        return side.metrics.get(metric) if side else None

    def interval(self, side: Side | None, metric: str) -> tuple[float, float] | None:
        return side.intervals.get(metric) if side else None

    def delta(self, metric: str) -> tuple[float | None, float | None]:
        """(absolute change, relative change) of a metric; None when a side lacks it."""
        a, b = self.value(self.base, metric), self.value(self.head, metric)
        if a is None or b is None:
            return None, None
        return b - a, ((b - a) / abs(a) if a else None)

    def unpriced_note(self) -> str | None:
        """Says when either side's capex leaves lines out (a capex change may then be a pricing change)."""
        sides = [(name, int(n)) for name, s in (("base", self.base), ("head", self.head))
                 if s is not None and (n := s.metrics.get("unpriced_lines"))]
        if not sides:
            return None
        return "capex is partial: " + "; ".join(f"{name} has {n} unpriced BOM line(s) "
                                                f"({', '.join(self._unpriced(name))})" for name, n in sides)

    def _unpriced(self, name: str) -> list[str]:
        side = self.base if name == "base" else self.head
        derived = side.analysis.derived if side else None
        return list(derived.bom.totals["unpriced_parts"]) if derived else []


def metrics_of(analysis: Analysis) -> dict[str, float | None]:
    out: dict[str, float | None] = {
        "errors": sum(f.severity == "error" and not f.waived for f in analysis.findings),
        "warnings": sum(f.severity == "warning" and not f.waived for f in analysis.findings),
    }
    topo, derived = analysis.topology, analysis.derived
    if topo is None or derived is None:
        return out
    bom = derived.bom
    qty = bom.totals["qty_by_category"]
    est = derived.estimate.as_dict()
    out.update({
        "gpus": topo.gpus, "servers": topo.servers, "switches": topo.switch_count,
        "transceivers": qty.get("transceiver", 0), "cables": qty.get("cable", 0),
        "it_kw": bom.power["it_kw"], "facility_kw": bom.power["facility_kw"], "capex": bom.totals["capex_usd"],
        "capex_low": bom.totals["capex_low"], "capex_high": bom.totals["capex_high"],
        "unpriced_lines": bom.totals["unpriced_lines"], "gpu_hour_usd": bom.tco["gpu_hour_usd"],
        "growth_usd": bom.totals.get("growth_usd", 0.0),
    })
    for fabric, fab in topo.fabrics.items():
        for tier in fab.tiers:
            out[f"switches.{fabric}.{tier.role}"] = fab.count(tier.role)
    if est["kind"] == "training":
        out.update({k: est[k] for k in ("mfu", "tokens_per_s", "step_time_s", "time_to_train_days")})
    else:
        out.update({"output_tokens_per_s_per_gpu": est["output_tokens_per_s_per_gpu"],
                    "total_tokens_per_s_per_gpu": est["total_tokens_per_s_per_gpu"],
                    "replicas_needed": est["replicas_needed"],
                    "cost_per_million_tokens": est["cost_per_million_tokens"],
                    "ttft_ms": est["ttft_ms"], "tpot_ms": est["tpot_ms"],
                    "max_concurrency": est["max_concurrency_per_replica"]})
        # the prefill pool of a P/D design (absent for aggregated serving, so its diff has no n/a rows)
        for key in ("prefill_replicas_needed", "prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu"):
            if est.get(key) is not None:
                out[key] = est[key]
    return out


def side(path: Path | None, display: str, run: RunConfig | None = None) -> Side | None:
    if path is None:
        return None
    analysis = analyze(path, display, run)
    return Side(analysis, metrics_of(analysis), intervals_of(analysis))


def intervals_of(analysis: Analysis) -> dict[str, tuple[float, float]]:
    """The estimate's interval of each diffed metric that has one."""
    if analysis.derived is None:
        return {}
    trust = analysis.derived.estimate.trust
    return {k: v for k, v in trust.intervals.items() if k in METRICS} if trust else {}


def compare(base: Path | None, head: Path | None, display: str, run: RunConfig | None = None,
            base_run: RunConfig | None = None) -> DesignDiff:
    """`base_run`: the base side's configuration (its price books as of the base), default `run`."""
    b, h = side(base, display, base_run or run), side(head, display, run)
    result = DesignDiff(display, b, h)
    before = {f.fingerprint: f for f in (b.analysis.findings if b else []) if not f.waived}
    after = {f.fingerprint: f for f in (h.analysis.findings if h else []) if not f.waived}
    result.new_findings = [after[k] for k in sorted(set(after) - set(before))]
    result.fixed_findings = [before[k] for k in sorted(set(before) - set(after))]
    return result


# ---------------------------------------------------------------- git


def _git(args: list[str], cwd: Path) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolError(f"git {' '.join(args)}: {exc}") from None
    if proc.returncode != 0:
        raise ToolError(f"git {' '.join(args)}: {proc.stderr.strip() or 'failed'}")
    return proc.stdout


def git_show(ref: str, rel: str, root: Path) -> str:
    """The text of `rel` at `ref` (ToolError when it is not there)."""
    return _git(["show", f"{ref}:{rel}"], root)


def git_root() -> Path:
    return Path(_git(["rev-parse", "--show-toplevel"], Path.cwd()).strip())


def git_diffs(ref: str, paths: list[Path], run: RunConfig | None = None) -> list[DesignDiff]:
    """Every design under `paths` that differs from `ref`, each side analysed from its own tree."""
    from validator.pipeline import looks_like_design

    cwd = Path.cwd()
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
    specs = [str(p.resolve().relative_to(root)) if p.resolve().is_relative_to(root) else str(p) for p in paths]
    names = changed_paths(ref, specs or ["."], root)
    changed = sorted(n for n in names if n.endswith((".yaml", ".yml")))
    if _pricing_changed(ref, root, run):     # every design is priced anew
        changed = sorted(set(changed) | set(_designs_under(paths or [root], root)))
    tmp = Path(tempfile.mkdtemp(prefix="clusterplan-base-"))
    try:
        (tmp / ".git").mkdir()     # marks the repository root for catalog path checks
        base_run = _base_run(ref, root, tmp, run)
        out = []
        for name in changed:
            head = root / name
            head_path = head if head.is_file() and looks_like_design(head) else None
            base_path = _checkout(ref, name, root, tmp)
            if base_path is not None and not looks_like_design(base_path):
                base_path = None
            if head_path is None and base_path is None:
                continue
            out.append(compare(base_path, head_path, display_name(root / name), run, base_run))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _config_files(run: RunConfig | None, root: Path) -> list[str]:
    """The repository configuration and the price books it names, relative to the repository root."""
    if run is None or run.config_path is None:
        return []
    config = run.config_path.resolve()
    files = [config, *((config.parent / p).resolve() for p in run.repo.prices)]
    return [f.relative_to(root.resolve()).as_posix() for f in files if f.is_relative_to(root.resolve())]


def _pricing_changed(ref: str, root: Path, run: RunConfig | None) -> bool:
    files = _config_files(run, root)
    return bool(files) and bool(changed_paths(ref, files, root))


def changed_paths(ref: str, specs: list[str], root: Path) -> list[str]:
    """The paths under `specs` that differ from `ref`, exactly as they are named: NUL-separated (`-z`),
    so a name git would quote (non-ASCII, a tab, a quote, a line break) is read as it is, never missed."""
    out = _git(["-c", "core.quotePath=false", "diff", "--name-only", "-z", "--no-renames", ref, "--", *specs], root)
    return [name for name in out.split("\0") if name]


def _designs_under(paths: list[Path], root: Path) -> list[str]:
    from validator.pipeline import discover

    found, _ = discover([p for p in paths if p.exists()], designs_only=True)
    return [f.resolve().relative_to(root.resolve()).as_posix() for f in found if f.resolve().is_relative_to(
        root.resolve())]


def _base_run(ref: str, root: Path, tmp: Path, run: RunConfig | None) -> RunConfig | None:
    """The run configuration as of `ref`: its .clusterplan.yaml and price books checked out under `tmp`."""
    from validator.read.config import load_config

    if run is None or run.config_path is None or not run.config_path.resolve().is_relative_to(root.resolve()):
        return run
    rel = run.config_path.resolve().relative_to(root.resolve()).as_posix()
    try:
        text = _git(["show", f"{ref}:{rel}"], root)
    except ToolError:
        return RunConfig(today=run.today, price_files=run.price_files)
    target = tmp / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    repo = load_config(target)
    for book in repo.prices:
        book_rel = (Path(rel).parent / book).as_posix()
        try:
            body = _git(["show", f"{ref}:{book_rel}"], root)
        except ToolError:
            continue      # the base named a book it did not have: its analysis reports it
        (tmp / book_rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / book_rel).write_text(body, encoding="utf-8")
    return RunConfig(repo, target, run.today, run.price_files)


def _checkout(ref: str, name: str, root: Path, tmp: Path) -> Path | None:
    """The file at `ref` (and the catalog files it names) under `tmp`, or None if it did not exist."""
    try:
        text = _git(["show", f"{ref}:{name}"], root)
    except ToolError:
        return None
    target = tmp / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    try:
        from validator.read.loader import load_yaml

        data = load_yaml(text, name).data
    except Exception:  # an unreadable base design is analysed (and reported) as it is
        data = None
    catalogs = data.get("catalogs", []) if isinstance(data, dict) else []
    for item in catalogs if isinstance(catalogs, list) else []:
        catalog = (Path(name).parent / str(item)).as_posix()
        try:
            body = _git(["show", f"{ref}:{catalog}"], root)
        except ToolError:
            continue
        dest = tmp / catalog
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(body, encoding="utf-8")
    return target


# ---------------------------------------------------------------- gates

_GATE = re.compile(r"^\s*(?P<metric>[a-z_.]+)\s*(?P<op><=|>=|<|>)\s*(?P<sign>[+-]?)(?P<num>[0-9.]+)\s*"
                   r"(?P<unit>%|pt)?\s*$")


@fact
class Gate:
    text: str
    metric: str
    op: str
    threshold: float
    unit: str       # "%", "pt" or "" (absolute)

    def trips(self, d: DesignDiff) -> str | None:
        absolute, relative = d.delta(self.metric)
        if absolute is None:
            return None
        if self.unit == "%":
            if relative is None:
                return None
            change, shown = relative * 100, f"{relative * 100:+.1f}%"
        elif self.unit == "pt":
            change, shown = absolute * 100, f"{absolute * 100:+.1f}pt"
        else:
            change, shown = absolute, f"{absolute:+g}"
        hit = {">": change > self.threshold, ">=": change >= self.threshold, "<": change < self.threshold,
               "<=": change <= self.threshold}[self.op]
        return f"{d.file}: {self.metric} changed {shown} ({self.text})" if hit else None


def parse_gate(text: str) -> Gate:
    m = _GATE.match(text)
    if not m or (m["metric"] not in METRICS and not m["metric"].startswith("switches.")):
        raise ToolError(f"--fail-if {text!r}: expected METRIC OP CHANGE, e.g. 'capex > +10%' or 'mfu < -2pt'; "
                        f"metrics: {', '.join(METRICS)}")
    value = float(m["num"]) * (-1 if m["sign"] == "-" else 1)
    return Gate(text.strip(), m["metric"], m["op"], value, m["unit"] or "")
