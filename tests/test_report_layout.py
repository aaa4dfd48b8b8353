"""The report as a person sees it, in headless Chromium (Debian's `chromium`, driven by Playwright):

- it opens with a verdict: a failing design says so before any figure, with its counts and top findings;
- no raw JSON key (`comm_share`, `memory_per_gpu_gb.total_gb`) appears in the text a reader sees;
- at 1,280 px nothing needs horizontal scrolling;
- printed on A4 every table, source excerpt and the topology picture fit inside the page width, and the
  PDF Chromium prints holds every table's last column (a cut column would be missing from the PDF's text).
"""

from __future__ import annotations

import io
import json
import re
import unicodedata

import pytest
import yaml

from tests.external import need
from tests.helpers import DESIGNS, cli

SUPERPOD = DESIGNS / "superpod-h100-4su.yaml"
SERVING = DESIGNS / "inference-h200-llama3-70b.yaml"
A4_PRINTABLE_PX = round((210 - 2 * 12) / 25.4 * 96)     # A4 width less the 12 mm margins of @page, CSS px

# every table, excerpt and picture must fit its page: (element, right edge, scrolled width, visible width)
MEASURE = """() => [...document.querySelectorAll('table, pre, .picture svg, section')].map(e => {
  const r = e.getBoundingClientRect();
  return [e.tagName + (e.id ? '#' + e.id : ''), r.right, e.scrollWidth, e.clientWidth || r.width];
})"""


@pytest.fixture(scope="module")
def browser():
    chromium = need("chromium", "chromium-browser")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def _report(design, tmp_path_factory, name: str):
    out = tmp_path_factory.mktemp("layout") / f"{name}.html"
    code, _, err = cli("report", str(design), "-o", str(out))
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def superpod(tmp_path_factory):
    return _report(SUPERPOD, tmp_path_factory, "superpod")


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    """The RoCE example on 128 servers with DP 64 x TP 8 x PP 4 = 2,048 GPUs: TRN005 fails it."""
    design = yaml.safe_load((DESIGNS / "roce-h100-2tier.yaml").read_text(encoding="utf-8"))
    design["compute"]["count"] = 128
    design["training"]["parallelism"]["dp"] = 64
    path = DESIGNS.parent / "tests" / "fixtures" / "report" / "layout-failing.yaml"
    tmp = tmp_path_factory.mktemp("failing")
    src = tmp / path.name
    src.write_text(yaml.safe_dump(design, sort_keys=False), encoding="utf-8")
    return _report(src, tmp_path_factory, "failing")


def _visible_text(browser, page_path) -> str:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(page_path.as_uri())
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    text = page.evaluate("() => document.body.innerText")
    page.close()
    return text


def _keys(data, prefix="") -> set[str]:
    out = set()
    for k, v in data.items():
        out |= {k, prefix + k}
        if isinstance(v, dict):
            out |= _keys(v, prefix + k + ".")
    return out


def test_a_failing_design_opens_with_a_fail_banner(browser, failing):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(failing.as_uri())
    first = page.evaluate("() => document.querySelector('main > section').id")
    banner = page.evaluate("() => document.querySelector('#verdict').innerText")
    page.close()
    assert first == "verdict"
    assert banner.startswith("Fails its rules")
    assert re.search(r"\b1 error\b", banner) and "TRN005" in banner


def test_a_passing_design_says_it_passes(browser, superpod):
    text = _visible_text(browser, superpod)
    assert text.index("Passes every rule") < text.index("Estimate (training)")
    assert "0 errors, 0 warnings" in text


@pytest.mark.parametrize("design", [SUPERPOD, SERVING], ids=["training", "inference"])
def test_no_raw_key_in_the_page(browser, design, tmp_path_factory):
    path = _report(design, tmp_path_factory, design.stem)
    text = _visible_text(browser, path)
    estimate = json.loads(cli("estimate", str(design), "--format", "json")[1])
    bom = json.loads(cli("bom", str(design), "--format", "json")[1])
    raw = {k for k in _keys(estimate) | _keys(bom) if "_" in k}
    shown = {k for k in raw if re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w-])", text)}
    assert shown == set()
    # and the figures are there in words: MFU 38.0 % style, not 0.38
    if design == SUPERPOD:
        assert f"{100 * estimate['mfu']:.1f} %" in text and "Time to train" in text


def test_no_horizontal_scrolling_at_1280_px(browser, superpod):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(superpod.as_uri())
    width = page.evaluate("() => document.documentElement.scrollWidth")
    boxes = page.evaluate(MEASURE)
    page.close()
    assert width <= 1280
    assert [b for b in boxes if b[1] > 1280 + 0.5] == []


def test_printed_on_a4_nothing_is_cut(browser, superpod, tmp_path):
    from pypdf import PdfReader

    page = browser.new_page(viewport={"width": A4_PRINTABLE_PX, "height": 1000})
    page.goto(superpod.as_uri())
    page.emulate_media(media="print")
    boxes = page.evaluate(MEASURE)
    last_headers = page.evaluate("() => [...document.querySelectorAll('table')].map(t => "
                                 "{ const c = t.rows[0] && t.rows[0].cells; return c && c.length ? "
                                 "c[c.length - 1].innerText : ''; })")
    pdf = page.pdf(format="A4", print_background=True)
    page.close()
    assert [b for b in boxes if b[1] > A4_PRINTABLE_PX + 0.5] == []
    assert [b for b in boxes if b[0] in ("TABLE", "PRE") and b[2] > b[3] + 1] == []
    text = " ".join((p.extract_text() or "") for p in PdfReader(io.BytesIO(pdf)).pages)
    # ligatures (the PDF's "ﬁ") as letters; a header wrapped over lines, or words the PDF's text run joins
    words = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    missing = [h for h in last_headers if h.strip() and re.sub(r"\s+", "", h) not in words]
    assert missing == []
    assert "price source" in last_headers      # the BOM table's last column, the widest one
