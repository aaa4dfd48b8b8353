"""Every output escapes free text for its own syntax (issue 16). The hostile strings are in
tests/fixtures/hostile/free-text.yaml; each test puts one into a design repository's catalog override
of a built-in entry (the way a pull request can) and reads the output back with its consumer's parser:
the spreadsheet cell is text, the configuration has the same lines and keys as with a benign name, the
JSON parses strictly, and the terminal gets no raw control character."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.helpers import FIXTURES, cli
from validator.emit.escape import cell_text, one_line, to_json, visible, yaml_string
from validator.resolve.catalog import DATA_DIR

HOSTILE = yaml.safe_load((FIXTURES / "hostile" / "free-text.yaml").read_text(encoding="utf-8"))
SMALL = (FIXTURES / "valid" / "small-inference.yaml").read_text()
EOS = (FIXTURES / "render" / "small-eos.yaml").read_text()
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _override(repo: Path, kind: str, file: str, entry_id: str, **fields: str) -> str:
    """A catalog file in `repo` overriding built-in entry `entry_id` with `fields`; its name."""
    entries = yaml.safe_load((DATA_DIR / f"{file}.yaml").read_text())["entries"]
    entry = {**next(e for e in entries if e["id"] == entry_id), **fields}
    name = f"{entry_id}.catalog.yaml"
    (repo / name).write_text(yaml.safe_dump({"kind": kind, "entries": [entry]}, allow_unicode=False))
    return name


def _design(repo: Path, text: str, *catalogs: str) -> Path:
    (repo / ".git").mkdir(exist_ok=True)
    listed = f"\ncatalogs: [{', '.join(catalogs)}]" if catalogs else ""
    path = repo / "d.yaml"
    path.write_text(text.replace("\nmetadata:", f"{listed}\nmetadata:", 1))
    return path


def _formulas(workbook: Path) -> list[tuple[str, str, object]]:
    from openpyxl import load_workbook

    return [(ws.title, c.coordinate, c.value) for ws in load_workbook(workbook).worksheets
            for row in ws.iter_rows() for c in row if c.data_type == "f"]


@pytest.fixture(scope="module")
def benign_formulas(tmp_path_factory):
    repo = tmp_path_factory.mktemp("benign")
    assert cli("bom", str(_design(repo, SMALL)), "--format", "xlsx", "-o", str(repo / "b.xlsx"))[0] == 0
    return _formulas(repo / "b.xlsx")


@pytest.mark.parametrize("text", HOSTILE["spreadsheet"], ids=range(len(HOSTILE["spreadsheet"])))
def test_spreadsheet_cell_that_would_be_a_formula_is_text(tmp_path, text, benign_formulas):
    from openpyxl import load_workbook

    path = _design(tmp_path, SMALL, _override(tmp_path, "server", "servers", "dgx-h200", name=text))
    code, out, _ = cli("bom", str(path), "--format", "csv")
    assert code == 0
    row = next(r for r in csv.DictReader(io.StringIO(out)) if r["part"] == "dgx-h200")
    assert row["description"] == "'" + cell_text(text)     # OWASP: a leading apostrophe makes it text
    assert not cell_text(text).startswith("'") and "\t" not in row["description"] and "\r" not in out

    assert cli("bom", str(path), "--format", "xlsx", "-o", str(tmp_path / "hostile.xlsx"))[0] == 0
    cell = next(r[2] for r in load_workbook(tmp_path / "hostile.xlsx")["BOM"].iter_rows(min_row=2)
                if r[1].value == "dgx-h200")
    assert (cell.value, cell.data_type, cell.quotePrefix) == (cell_text(text), "s", True)
    # the only formulas are clusterplan's own, the same as for a benign name
    assert _formulas(tmp_path / "hostile.xlsx") == benign_formulas != []


def test_control_characters_never_reach_a_sheet_cell(tmp_path):
    from openpyxl import load_workbook

    text = HOSTILE["terminal"]
    path = _design(tmp_path, SMALL, _override(tmp_path, "server", "servers", "dgx-h200", name=text))
    assert cli("bom", str(path), "--format", "xlsx", "-o", str(tmp_path / "b.xlsx"))[0] == 0
    cell = next(r[2] for r in load_workbook(tmp_path / "b.xlsx")["BOM"].iter_rows(min_row=2)
                if r[1].value == "dgx-h200")
    assert cell.value == "]0;owned[2J[31mredevil31m"
    code, out, _ = cli("bom", str(path), "--format", "csv")
    assert code == 0 and ",]0;owned[2J[31mredevil31m," in out


def _render(design: Path, out: Path) -> dict[str, str]:
    code, _, err = cli("render", str(design), "-o", str(out))
    assert code == 0, err
    return {p.relative_to(out).as_posix(): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()
            and p.parent.name == "compute"}


def test_eos_config_has_the_same_lines_with_a_hostile_catalog_name(tmp_path):
    text = HOSTILE["config"]
    (tmp_path / "a").mkdir()
    benign = _render(_design(tmp_path / "a", EOS), tmp_path / "oa")
    (tmp_path / "b").mkdir()
    name = _override(tmp_path / "b", "switch", "switches", "arista-7060x6-64pe", name=text)
    hostile = _render(_design(tmp_path / "b", EOS, name), tmp_path / "ob")
    assert sorted(hostile) == sorted(benign) and benign
    assert [f for f in hostile if f.endswith(".cfg")]
    for file, config in hostile.items():
        if file.endswith(".avd.yml"):       # AVD's structured config: the same keys and values
            assert _yaml(config) == _yaml(benign[file])
            continue
        lines, reference = config.splitlines(), benign[file].splitlines()
        assert len(lines) == len(reference)
        assert [x for x in lines if not x.startswith("!")] == [x for x in reference if not x.startswith("!")]
        assert lines[0].endswith(", " + one_line(text)) and "username" not in "".join(lines[1:])


def _yaml(text: str) -> object:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def test_nvue_config_has_the_same_keys_with_a_hostile_catalog_name(tmp_path):
    text = HOSTILE["config"]
    design = EOS.replace("arista-7060x6-64pe", "sn5600")
    (tmp_path / "a").mkdir()
    benign = _render(_design(tmp_path / "a", design), tmp_path / "oa")
    (tmp_path / "b").mkdir()
    name = _override(tmp_path / "b", "switch", "switches", "sn5600", name=text)
    hostile = _render(_design(tmp_path / "b", design, name), tmp_path / "ob")
    assert sorted(hostile) == sorted(benign) and all(f.endswith("startup.yaml") for f in benign)
    for file, config in hostile.items():
        assert _yaml(config) == _yaml(benign[file])
        assert len(config.splitlines()) == len(benign[file].splitlines())


def test_sonic_config_holds_hostile_text_only_as_a_json_string(tmp_path):
    """A hostile catalog name and SONiC fields leave config_db as for a benign one: the platform and HWSKU
    come from clusterplan's own data file (validator/data/sonic_platforms.yaml), the rest is identifiers."""
    text = HOSTILE["config"]
    design = EOS.replace("arista-7060x6-64pe", "sonic-th5-64x800")
    (tmp_path / "a").mkdir()
    benign = _render(_design(tmp_path / "a", design), tmp_path / "oa")
    (tmp_path / "b").mkdir()
    name = _override(tmp_path / "b", "switch", "switches", "sonic-th5-64x800", name=text, sonic_platform=text,
                     sonic_hwsku=text)
    hostile = _render(_design(tmp_path / "b", design, name), tmp_path / "ob")
    assert sorted(hostile) == sorted(benign) and any(f.endswith("config_db.json") for f in benign)
    for file, config in hostile.items():
        if file.endswith("config_db.json"):
            assert json.loads(config) == json.loads(benign[file]) and "pwned" not in config


@pytest.mark.parametrize("text", [HOSTILE["config"], HOSTILE["terminal"], 'a"b\\c: #d', "- [x]\n  y: {z}"])
def test_yaml_string_filter_is_one_scalar(text):
    line = f"description: {yaml_string(text)}"
    assert "\n" not in line and yaml.safe_load(line) == {"description": one_line(text)}


def test_terminal_shows_control_characters_as_escapes(tmp_path):
    text = HOSTILE["terminal"]
    path = tmp_path / "d\x1b[31m.yaml"
    path.write_text(SMALL.replace("kind: InferenceFleet", f"kind: InferenceFleet\n{json.dumps(text)}: 1"))
    code, out, err = cli("validate", str(path))
    assert code == 1 and not RAW_CONTROL.search(out + err)
    assert "d\\x1b[31m.yaml" in out and visible(text) in out
    code, _, err = cli("render", str(path.with_name("\x1b]0;t\x07.yaml")), "-o", str(tmp_path / "o"))
    assert code == 2 and err == f"clusterplan: error: {tmp_path}/\\x1b]0;t\\x07.yaml: no such design file\n"


def test_json_never_holds_infinity_nan_or_raw_c1_controls():
    text = to_json({"a": float("inf"), "b": [float("nan"), -float("inf"), 1.5], "c": "x\x9b31m\u202e"})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"JSON holds {c}")) == {
        "a": None, "b": [None, None, 1.5], "c": "x\x9b31m\u202e"}
    assert not RAW_CONTROL.search(text)


def test_report_formats_carry_no_raw_control_character(tmp_path):
    path = tmp_path / "d.yaml"
    key = json.dumps(HOSTILE["terminal"])
    path.write_text(SMALL.replace("kind: InferenceFleet", f"kind: InferenceFleet\n{key}: 1"))
    for fmt in ("json", "sarif", "junit", "github", "md"):
        code, out, _ = cli("validate", str(path), "--format", fmt)
        assert code == 1 and not RAW_CONTROL.search(out), fmt


def test_markdown_summary_shows_hostile_text_as_text(tmp_path):
    """A key quoted back in a finding cannot add an image, a tag, a mention or a table column to the job
    summary or the pull-request comment."""
    path = tmp_path / "d.yaml"
    key = '![x](http://evil.example/p.png) <img src=x> @org/team | `code`'
    path.write_text(SMALL.replace("kind: InferenceFleet", f"kind: InferenceFleet\n{json.dumps(key)}: 1"))
    code, out, _ = cli("validate", str(path), "--format", "md")
    row = next(line for line in out.splitlines() if "unknown key" in line)
    assert code == 1 and row.endswith("| unknown key '\\!\\[x\\](http://evil.example/p.png) \\<img src=x\\> "
                                      "\\@org/team \\| \\`code\\`' in \\<root\\> |")
    assert row.count(" | ") == 3    # four columns, as the header says


@pytest.mark.parametrize("pad", [0, 200])     # short cells are memoised (escape._short_csv_text); long ones not
def test_csv_cell_neutralises_formulas_and_controls_on_both_paths(pad):
    from validator.emit.escape import csv_cell

    tail = "x" * pad
    assert csv_cell("=HYPERLINK(1)" + tail) == "'=HYPERLINK(1)" + tail
    assert csv_cell("  @SUM(A1)" + tail) == "'  @SUM(A1)" + tail
    assert csv_cell("a\x00b\u202ec\n" + tail) == "abc" + tail
    assert csv_cell("leaf-su1-07" + tail) == "leaf-su1-07" + tail
    for _ in range(2):    # the second time from the memo
        assert csv_cell("-1" + tail) == "'-1" + tail
    assert csv_cell(None) == "" and csv_cell(float("inf")) == "" and csv_cell(400) == 400 and csv_cell(True) is True


@pytest.mark.parametrize("text", [HOSTILE["config"], HOSTILE["terminal"], "100% %s %(x)s %%d", "- [x]\n  y: {z}"])
def test_nvue_port_and_neighbour_lines_keep_hostile_text_in_one_scalar(tmp_path, text):
    """The NVUE template writes each port's lines as one %-format (templates/nvue/startup.yaml.j2). Free text
    in a port's description or a BGP neighbour's name (today identifiers and cable ids; the escaping is the
    guard) stays one double-quoted scalar, `%` written as itself: the same lines and keys as a benign text."""
    import copy

    from validator.emit.render import _Templates
    from validator.emit.render.build import device_configs
    from validator.emit.render.switch_os import nvue_context
    from validator.pipeline import analyze

    topology = analyze(_design(tmp_path, EOS.replace("arista-7060x6-64pe", "sn5600"))).topology
    assert topology is not None
    device = next(device_configs(topology, "compute"))
    assert device.os == "cumulus" and device.neighbors

    def rendered(prefix: str) -> str:
        d = copy.deepcopy(device)
        for i in d.interfaces:
            i.description, i.peer = prefix + i.description, prefix + i.peer
        return _Templates(None).render("nvue/startup.yaml.j2", **nvue_context(d))

    def swapped(value: object) -> object:        # the benign text's marker replaced by the escaped hostile one
        if isinstance(value, dict):
            return {swapped(k): swapped(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swapped(v) for v in value]
        return one_line(text) + value[6:] if isinstance(value, str) and value.startswith("BENIGN") else value

    benign, hostile = rendered("BENIGN"), rendered(text)
    assert len(hostile.splitlines()) == len(benign.splitlines())
    assert _yaml(hostile) == swapped(_yaml(benign)) != _yaml(benign)
