"""CLI contract: exit codes 0 / 1 / 2, machine output alone on stdout, no traceback."""

from __future__ import annotations

import json

from tests.helpers import DESIGNS, FIXTURES, cli, cli_subprocess


def test_examples_pass():
    code, out, _ = cli("validate", "designs/")
    assert code == 0
    n = len(list(DESIGNS.glob("*.yaml")))
    assert f"{n} designs checked: {n} passed, 0 failed" in out


def test_invalid_design_exits_1():
    code, out, _ = cli("validate", str(FIXTURES / "malformed" / "bad-enum.yaml"))
    assert code == 1
    assert "did you mean 'roce'?" in out


def test_missing_file_exits_2_with_message():
    proc = cli_subprocess("validate", "no/such/design.yaml")
    assert proc.returncode == 2
    assert "no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_directory_without_designs_exits_2(tmp_path):
    (tmp_path / "other.yaml").write_text("foo: bar\n")
    proc = cli_subprocess("validate", str(tmp_path))
    assert proc.returncode == 2 and "no design files found" in proc.stderr


def test_unknown_option_is_usage_error():
    proc = cli_subprocess("validate", "--nope", "designs/")
    assert proc.returncode == 2


def test_json_report_alone_on_stdout():
    code, out, _ = cli("validate", "designs/", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["version"] == 1 and data["summary"]["designs"] == len(list(DESIGNS.glob("*.yaml")))


def test_directory_walk_skips_non_designs_and_counts_them(tmp_path):
    (tmp_path / "catalog.yaml").write_text("kind: gpu\nentries: []\n")
    good = (FIXTURES / "valid" / "small-inference.yaml").read_text()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.yml").write_text(good)
    (tmp_path / "loop").symlink_to(tmp_path)  # a symlink loop must not hang the walk
    code, out, _ = cli("validate", str(tmp_path))
    assert code == 0
    assert "1 design checked" in out and "1 other YAML file skipped" in out


def test_directory_given_as_design_file_is_an_error():
    code, _, err = cli("describe", "designs")
    assert code == 2 and "is a directory" in err
    code, _, err = cli("describe", "designs/nope.yaml")
    assert code == 2 and "no such design file" in err


def test_version():
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith("clusterplan 0.1.0")


def test_catalog_list_and_show():
    code, out, _ = cli("catalog", "list", "switch")
    assert code == 0 and "qm9700" in out and "h100-sxm" not in out
    code, out, _ = cli("catalog", "show", "qm9700")
    assert code == 0 and json.loads(out)["power_max_w"] == 1720
    code, _, err = cli("catalog", "show", "qm970")
    assert code == 2 and "did you mean" in err and "qm9700" in err


def test_schema_check_passes_on_committed_schemas():
    code, _, _ = cli("schema", "--check")
    assert code == 0


def test_validate_keeps_heavy_imports_out_of_start_up():
    import sys

    code = ("import sys; from validator.commands import main; sys.argv = ['clusterplan', 'validate', 'designs/']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('openpyxl', 'jinja2', 'networkx', 'jsonschema') if m in sys.modules))\n"
            "from validator.resolve.catalog.entries import ENTRY_TYPES\n"
            "from validator.resolve.prices import PriceBook\n"
            "from validator.read.config import RepoConfig\n"
            "print(sorted(m.__name__ for m in (*ENTRY_TYPES.values(), PriceBook, RepoConfig) "
            "if m.__pydantic_complete__))")
    import subprocess

    from tests.helpers import ROOT

    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    heavy, schemas_built = proc.stdout.strip().splitlines()[-2:]
    assert heavy == "[]", proc.stdout + proc.stderr
    # the built-in catalog and price book are constructed, not validated (validator/resolve/trusted.py),
    # and so is the default configuration of a repository without .clusterplan.yaml
    assert schemas_built == "[]", proc.stdout + proc.stderr


def test_one_command_app_reads_every_command_line_as_the_whole_app_does():
    """`main` builds only the command a run names (validator.commands._app_for): its help and its usage
    errors must be the whole app's, for every command and group."""
    from typer.testing import CliRunner

    from validator.commands import COMMANDS, GROUPS, _app_for, app

    names = [c.__name__ for c in COMMANDS] + list(GROUPS)
    assert len(names) == len(app.registered_commands) + len(app.registered_groups)
    for name in names:
        for argv in ([name, "--help"], [name, "--no-such-option"]):
            one, whole = (CliRunner().invoke(a, argv, prog_name="clusterplan") for a in (_app_for(argv), app))
            assert _app_for(argv) is not app
            assert (one.exit_code, one.output) == (whole.exit_code, whole.output), argv
    assert _app_for(["valdate"]) is app and _app_for(["--help"]) is app and _app_for([]) is app
