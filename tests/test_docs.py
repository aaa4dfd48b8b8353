"""Generated documentation pages are committed and current."""

from tests.helpers import ROOT
from validator.emit.docs import design_format_md


def test_design_format_page_is_current():
    committed = (ROOT / "docs" / "design-format.md").read_text(encoding="utf-8")
    assert committed == design_format_md(), "run `clusterplan docs design-format -o docs/design-format.md`"


def test_design_format_page_documents_every_section():
    page = design_format_md()
    for section in ("## Compute", "## Fabric", "## Lossless", "## Training", "## Inference", "## Waiver",
                    "## Kind"):
        assert section in page
