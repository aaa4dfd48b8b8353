"""The workbooks print: the BOM sheet portrait at 8 pt or more (LibreOffice's PDF), the other sheets
landscape; one page wide, title row repeated, design and date in the header, page numbers in the footer,
frozen header; fonts named; `bom` and `cabling` write different workbooks; the cabling plan breaks its
pages at each rack."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import ROOT, cli


@pytest.mark.parametrize(("command", "sheets"), [("bom", ["Summary", "BOM", "Sources", "Power & Cooling", "Findings"]),
                                                 ("cabling", ["Summary", "Cabling"])])
def test_every_sheet_prints_and_names_its_fonts(tmp_path, command, sheets):
    from openpyxl import load_workbook

    out = tmp_path / f"{command}.xlsx"
    code, _, _ = cli(command, "designs/superpod-h100-4su.yaml", "--format", "xlsx", "-o", str(out),
                     "--timestamp", "2026-12-01T00:00:00")
    assert code == 0
    wb = load_workbook(out)
    assert wb.sheetnames == sheets
    for ws in wb.worksheets:
        assert ws.page_setup.orientation == ("portrait" if ws.title == "BOM" else "landscape"), ws.title
        assert ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth == 1
        assert ws.page_setup.fitToHeight == 0                  # as many pages tall as it takes
        assert ws.print_title_rows == "$1:$1"
        assert ws.freeze_panes == "A2"
        assert ws.oddHeader.left.text == f"superpod-h100-4su ({command})"
        assert ws.oddHeader.right.text == "2026-12-01"
        assert ws.oddFooter.center.text == "Page &P of &N"
        assert all(c.font.name for c in ws[1]), ws.title       # header cells name their font
    assert wb._fonts[0].name == "Calibri"                      # and so does the workbook default


SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
PAPER = {"A4": 9, "Letter": 1}      # ECMA-376 paperSize codes


def _pdf_text_sizes(pdf: Path) -> list[tuple[str, float]]:
    """(first header text, smallest rendered font size in pt) per page: each piece of text's font size
    times the scale of its text and page matrices (LibreOffice scales a fit-to-width sheet that way)."""
    from pypdf import PdfReader

    def visitor(seen: list[tuple[str, float]]):
        def visit(text: str, cm: list[float], tm: list[float], _font: object, size: float) -> None:
            if text.strip():
                a, b = tm[0] * cm[0] + tm[1] * cm[2], tm[0] * cm[1] + tm[1] * cm[3]
                c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
                seen.append((text.strip(), size * abs(a * d - b * c) ** 0.5))
        return visit

    pages = []
    for page in PdfReader(pdf).pages:
        seen: list[tuple[str, float]] = []
        page.extract_text(visitor_text=visitor(seen))
        pages.append((" ".join(t for t, _ in seen[:3]), min(s for _, s in seen)))
    return pages


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice not installed (.ci/run installs libreoffice-calc)")
@pytest.mark.parametrize("paper", PAPER)
def test_bom_sheet_prints_portrait_at_8pt_or_more(tmp_path, paper):
    """LibreOffice's PDF of the BOM sheet, A4 and Letter portrait: every glyph at 8 pt or more (the machine's
    substitute for Calibri, DejaVu Sans here, is wider than Calibri: a worst case)."""
    from openpyxl import load_workbook

    out = tmp_path / "bom.xlsx"
    assert cli("bom", "designs/superpod-h100-4su.yaml", "-f", "xlsx", "-o", str(out), "--timestamp",
               "2026-12-01")[0] == 0
    wb = load_workbook(out)
    for title in wb.sheetnames:
        if title != "BOM":
            del wb[title]
    ws = wb["BOM"]
    assert ws.page_setup.orientation == "portrait" and ws.print_area == f"'BOM'!$A$1:$J${ws.max_row}"
    ws.page_setup.paperSize = PAPER[paper]
    wb.save(tmp_path / "only.xlsx")
    subprocess.run([SOFFICE, "--headless", f"-env:UserInstallation=file://{tmp_path}/profile", "--convert-to", "pdf",
                    "--outdir", str(tmp_path / "pdf"), str(tmp_path / "only.xlsx")], check=True, timeout=180,
                   capture_output=True)
    pages = _pdf_text_sizes(tmp_path / "pdf" / "only.pdf")
    assert pages and all("BOM" in head for head, _ in pages)
    assert min(size for _, size in pages) >= 8.0


def test_cabling_pages_break_at_each_rack_and_repeat_the_header(tmp_path):
    import zipfile

    out = tmp_path / "cabling.xlsx"
    assert cli("cabling", "designs/superpod-h100-4su.yaml", "-f", "xlsx", "-o", str(out), "--timestamp",
               "2026-12-01")[0] == 0
    from openpyxl import load_workbook

    ws = load_workbook(out)["Cabling"]
    rows = list(ws.iter_rows(min_row=2, values_only=True))
    rack = list(ws[1]).index(next(c for c in ws[1] if c.value == "a_rack"))
    changes = [n for n in range(3, len(rows) + 2) if rows[n - 2][rack] != rows[n - 3][rack]]
    xml = zipfile.ZipFile(out).read("xl/worksheets/sheet2.xml").decode()
    assert changes and f'<rowBreaks count="{len(changes)}"' in xml
    assert all(f'<brk id="{n - 1}" ' in xml for n in changes)          # a break before each new rack
    assert ws.print_title_rows == "$1:$1"                               # the header on every page


def test_a_design_outside_git_is_undated_not_1980(tmp_path, monkeypatch):
    from openpyxl import load_workbook

    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    design = tmp_path / "d.yaml"
    shutil.copy(ROOT / "designs" / "inference-h200-llama3-70b.yaml", design)
    out = tmp_path / "b.xlsx"
    assert cli("bom", str(design), "-f", "xlsx", "-o", str(out))[0] == 0
    header = load_workbook(out)["BOM"].oddHeader.right.text
    assert "1980" not in header and header.startswith("undated")
