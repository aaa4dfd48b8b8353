"""`clusterplan report`: one self-contained HTML page, checked in headless Chromium (Debian's `chromium`):
it renders, logs nothing to the console (no script, nothing fetched: the page's Content-Security-Policy would
log any attempt), names from the design come out as text, and its totals equal the JSON of `bom` and
`estimate`. Diffs against a base file and a git ref."""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser

import pytest

from tests.external import need
from tests.helpers import DESIGNS, FIXTURES, cli

HOSTILE = FIXTURES / "report" / "hostile-names.yaml"


class _Page(HTMLParser):
    """Tags, data-key/data-value pairs, and the text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[dict[str, str | None]] = []
        self.values: dict[str, object] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        self.attrs.append(a)
        if a.get("data-key") is not None and a.get("data-value") is not None:
            self.values[a["data-key"]] = json.loads(a["data-value"])

    def handle_data(self, data):
        self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _chromium(path, tmp_path) -> tuple[str, list[str]]:
    """The DOM Chromium built from the page, and the console messages it logged."""
    browser = need("chromium", "chromium-browser")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                           "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    code, _, err = cli("report", str(HOSTILE), "-o", str(out))
    assert code == 0, err
    return out


def test_chromium_reports_console_messages(tmp_path):
    """The check below can fail: a page with a script and a fetch logs both."""
    page = tmp_path / "control.html"
    page.write_text('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                    "content=\"default-src 'none'\"></head><body><p>x</p><script>console.error('x')</script>"
                    '<img src="http://example.invalid/x.png"></body></html>')
    _, console = _chromium(page, tmp_path)
    assert len(console) == 2


def test_report_renders_without_console_messages_and_totals_match_json(hostile, tmp_path):
    dom, console = _chromium(hostile, tmp_path)
    assert console == []
    page = _parse(dom)
    assert {"section", "table", "svg"} <= set(page.tags)
    ids = {a.get("id") for a in page.attrs}
    assert {"findings", "estimate", "bom", "failures", "topology", "rack-elevations"} <= ids
    bom = json.loads(cli("bom", str(HOSTILE), "--format", "json")[1])
    for key in ("capex_usd", "capex_complete", "lines"):
        assert page.values[f"bom.totals.{key}"] == bom["totals"][key]
    assert page.values["bom.power.it_kw"] == bom["power"]["it_kw"]
    assert page.values["bom.power.facility_kw"] == bom["power"]["facility_kw"]
    assert page.values["bom.tco.gpu_hour_usd"] == bom["tco"]["gpu_hour_usd"]
    estimate = json.loads(cli("estimate", str(HOSTILE), "--format", "json")[1])
    for key in ("step_time_s", "mfu", "tokens_per_s", "breakdown.compute", "memory_per_gpu_gb.total_gb"):
        head, _, tail = key.partition(".")
        want = estimate[head][tail] if tail else estimate[head]
        assert page.values[f"estimate.{key}"] == want
    assert sum(1 for k in page.values if k.startswith("estimate.")) > 20
    assert page.values["gpus"] == 64


def test_names_from_the_design_are_text(hostile, tmp_path):
    html = hostile.read_text()
    page = _parse(html)
    # no element the design asked for: the page itself has no script, no img, no event handler
    assert "script" not in page.tags and "img" not in page.tags
    assert not [a for a in page.attrs for k in a if k.startswith("on")]
    text = "".join(page.text)
    assert "</title><script>console.error('name')</script>" in text
    assert "<img src=x onerror=\"console.error('description')\"> & <b>bold</b>" in text


def test_diff_against_a_base_file(tmp_path):
    base = FIXTURES / "failures" / "two-tier.yaml"
    head = tmp_path / "two-tier.yaml"
    head.write_text(base.read_text().replace("count: 16\n", "count: 12\n", 1))
    out = tmp_path / "r.html"
    code, _, err = cli("report", str(head), "-o", str(out), "--base", str(base))
    assert code == 0, err
    html = out.read_text()
    assert 'id="diff"' in html and "GPUs" in html and "-32 (-25.0%)" in html


def test_diff_against_a_git_ref_of_an_unchanged_design(tmp_path):
    need("git")
    out = tmp_path / "r.html"
    code, _, err = cli("report", str(DESIGNS / "inference-h100-no-backend.yaml"), "-o", str(out), "--base", "HEAD")
    assert code == 0, err
    assert "(unchanged)" in out.read_text()


def test_rack_elevations_equal_the_racks_output(hostile, tmp_path):
    """The report's rack section shows what `clusterplan racks --format json` computes: the rack count,
    the rack units used, the power; and every rack of the design is named once (shown or listed)."""
    racks = json.loads(cli("racks", str(HOSTILE), "--format", "json")[1])
    page = _parse(hostile.read_text())
    assert page.values["racks.total"] == racks["racks_total"] == len(racks["racks"])
    assert page.values["racks.ru_used"] == racks["ru_used_total"]
    assert page.values["racks.power_total_kw"] == racks["power_total_kw"]
    counts = [int(a["data-racks"] or 0) for a in page.attrs if "data-racks" in a]
    assert sum(counts) == len(racks["racks"]) and 0 < len(counts) <= len(racks["racks"])   # each rack once


def test_report_is_deterministic(hostile, tmp_path):
    again = tmp_path / "again.html"
    assert cli("report", str(HOSTILE), "-o", str(again))[0] == 0
    assert again.read_bytes() == hostile.read_bytes()
