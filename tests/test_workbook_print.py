"""The workbooks print: every sheet landscape, one page wide, title row repeated, design and date
in the header, page numbers in the footer, frozen header; fonts named; `bom` and `cabling` write
different workbooks."""

from __future__ import annotations

import pytest

from tests.helpers import cli


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
