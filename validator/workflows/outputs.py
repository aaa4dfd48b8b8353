"""Generated files a design repository commits (declared in .clusterplan.yaml): regenerate them and say
which differ, as documentation-generator hooks do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from validator.base.errors import ToolError
from validator.base.paths import display_name
from validator.check.result import Analysis
from validator.emit.files import write_atomic
from validator.emit.workbook import build_workbook
from validator.pipeline import analyze
from validator.read.config import RunConfig

if TYPE_CHECKING:
    from validator.derive.bom import Bom


def _bom_bytes(design: Path, analysis: Analysis, target: Path) -> bytes:
    from validator.emit import tables

    suffix = target.suffix.lower()
    if suffix == ".xlsx":
        return build_workbook(design, analysis)
    assert analysis.derived is not None
    bom = analysis.derived.bom
    makers: dict[str, Callable[[Bom], str]] = {
        ".json": tables.bom_json, ".csv": tables.bom_csv, ".md": lambda b: tables.bom_text(b, markdown=True),
        ".txt": tables.bom_text}
    if suffix not in makers:
        raise ToolError(f"{target}: BOM format from the suffix must be .json, .csv, .md, .txt or .xlsx")
    return makers[suffix](bom).encode("utf-8")


def _cabling_bytes(design: Path, analysis: Analysis, target: Path) -> bytes:
    from validator.emit import tables

    suffix = target.suffix.lower()
    if suffix == ".xlsx":
        return build_workbook(design, analysis, kind="cabling")
    assert analysis.derived is not None
    plan = analysis.derived.cabling
    if suffix == ".json":
        return tables.cabling_json(plan).encode("utf-8")
    if suffix == ".csv":
        return "".join(tables.cabling_csv_rows(plan)).encode("utf-8")
    raise ToolError(f"{target}: cabling format from the suffix must be .csv, .json or .xlsx")


def expected(config_path: Path, run: RunConfig) -> Iterator[tuple[Path, bytes]]:
    """(file, expected bytes) for every declared output, in declaration order."""
    from validator.emit.render import render_configs

    base = config_path.parent
    for out in run.repo.outputs:
        design = base / out.design
        if not design.is_file():
            raise ToolError(f"{config_path}: design {out.design} does not exist")
        analysis = analyze(design, display_name(design), run)
        if analysis.topology is None:
            first = analysis.findings[0]
            raise ToolError(f"{first.file}:{first.line}:{first.col}: {first.message} "
                            "(fix the design before regenerating its outputs)")
        if out.bom:
            yield base / out.bom, _bom_bytes(design, analysis, base / out.bom)
        if out.cabling:
            yield base / out.cabling, _cabling_bytes(design, analysis, base / out.cabling)
        if out.render:
            for item in render_configs(analysis.topology):
                yield base / out.render / item.path, item.text.encode("utf-8")


def refresh(config_path: Path, run: RunConfig, write: bool) -> list[Path]:
    """Files whose committed content differs from what the designs generate (written unless `write` is off)."""
    stale = []
    for path, data in expected(config_path, run):
        current = path.read_bytes() if path.is_file() else None
        if current != data:
            stale.append(path)
            if write:
                write_atomic(path, data)
    return stale
