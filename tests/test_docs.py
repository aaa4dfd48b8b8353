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


def test_catalog_ids_in_the_docs_name_catalog_entries():
    """A reader copies the examples: every `server:` and `switch:` id written in a YAML example of the
    docs (and the README) must be a catalog entry, or the copied example fails REF001."""
    import re

    from validator.resolve.catalog import builtin_catalog

    catalog = builtin_catalog()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "validator" / "data" / "fabric-shapes.md"]
    wrong = []
    for page in pages:
        for block in re.findall(r"```ya?ml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for kind, entry in re.findall(r"\b(server|switch): ([a-z0-9][a-z0-9._-]*)", block):
                if catalog.find(kind, entry) is None:
                    wrong.append(f"{page.name}: {kind} {entry}")
    assert not wrong, wrong
