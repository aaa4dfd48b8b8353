"""Repository mutations for the fuzz runs (issue 29): what a pull request controls besides the design's
values. A repository mutant is a design (a mutant of tests/fuzzing.py) with a hostile file name, a
mutated `.clusterplan.yaml` (rules turned off, waivers, outputs declared inside .git/ or over other files,
a forged `.clusterplan-outputs.json`) and a hostile repository template (mutating calls, loop and
repetition bombs, exceptions, workflow commands, escape sequences).

`run_repo` runs it through the real entry point: `validate` (text, Markdown, JUnit), `render` with the
template, `bom --template`, `bom --format rfq` and `outputs --check`. A failure is what tests/fuzzing.py
counts, and also a workflow command or raw control character on stdout, invalid JUnit XML, a file written
or removed under .git/ or outside the repository, or README.md changed.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from tests.fuzzing import Outcome, _entry_point, _failure, mutant

FILE_NAMES = ["d.yaml", "désign.yaml", "tab\there.yaml", 'q"uote.yaml', "a|b.yaml", "`c`.yaml",
              "![x](http:e) <img src=x> @org.yaml", "line\n::error::x.yaml", "\x1b[2J.yaml", "##[group]x.yaml",
              "d\ufffe\uffff.yaml", "-rf.yaml", "=1+1.yaml", "a\u202eb.yaml", " ::warning::y.yaml"]
TEMPLATES = [
    "{{ d.name | tojson }}",
    "{{ d.model.port_groups.append(1) }}",
    "{{ d.buffers.pools.update({}) if d.buffers else d.interfaces.clear() }}",
    "{{ d.model.model_rebuild() }}",
    "{% set r = range(99999) %}{% for a in r %}{% for b in r %}{% endfor %}{% endfor %}",
    "{{ 'x' * 10**10 }}", "{{ ('x' * 1000000).replace('x', 'x' * 1000) }}", "{{ 'x' | center(10**10) }}",
    "{{ '{:>999999999}'.format(1) }}", "{{ '%*d' % (10**9, 1) }}", "{{ 10 ** (10 ** 10) }}",
    "{{ range(99999) | join('x' * 15999999) }}", "{{ ('x' * 1000000) | replace('x', 'x' * 100) }}",
    "{}\n{{ 1 // 0 }}", "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "{% for x in %}", "{{ nope }}",
    "::error::{{ d.name }}\n##[warning]x\n\x1b]0;t\x07", "{% include '../../README.md' %}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}", "{{ d.qos.dscps(3) if d.qos else d.name }}",
]
CONFIGS = [
    'severity: {{{rule}: "off"}}\n',
    "severity: {{{rule}: info}}\nwaivers:\n  - {{rule: {rule}, reason: \"::error::x ![x](http:e)\", owner: \"@o\"}}\n",
    "outputs:\n  - {{design: {design}, bom: .git/x.json}}\n",
    "outputs:\n  - {{design: {design}, render: .git}}\n",
    "outputs:\n  - {{design: {design}, bom: README.md}}\n",
    "outputs:\n  - {{design: {design}, bom: ../outside.json}}\n",
    "outputs:\n  - {{design: {design}, bom: gen/b.json, cabling: gen/c.csv, render: gen/r}}\n",
    "outputs:\n  - {{design: {design}, bom: gen/b.md}}\nprices: [missing.yaml]\n",
    "severity: [1, 2]\n", "waivers: {{}}\n", "outputs: [{{design: nope.yaml}}]\n", "",
]
MANIFESTS = [None, {"README.md": "file"}, {".git/config": "x"}, {"../outside.json": "file"},
             {"README.md": "SHA"}, {"gen/b.json": "x", "gen/r": "directory"}]
RULES = ["NET001", "TRN002", "TRN009", "FAC001", "WVR001", "YAML001", "NOPE999"]
RUNNER_COMMAND = re.compile(r"^\s*::|##\[", re.M)
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
README = "# read me\n"


@dataclass
class RepoMutant:
    design: bytes
    name: str
    config: str | None
    manifest: dict[str, str] | None
    template: str | None


def repo_mutant(rng: random.Random) -> RepoMutant:
    design = mutant(rng)
    name = rng.choice(FILE_NAMES)
    config = rng.choice(CONFIGS).format(rule=rng.choice(RULES), design=json.dumps(name)) \
        if rng.random() < 0.7 else None
    template = rng.choice(TEMPLATES) if rng.random() < 0.7 else None
    if template is not None and rng.random() < 0.5:     # most templates render on a design that analyses
        design = (Path(__file__).parent / "fixtures" / "valid" / "small-inference.yaml").read_bytes()
    if template is not None:
        design = design.replace(b"kind: InferenceFleet", b"kind: InferenceFleet\ntemplates: tpl", 1).replace(
            b"kind: TrainingCluster", b"kind: TrainingCluster\ntemplates: tpl", 1)
    return RepoMutant(design, name, config, rng.choice(MANIFESTS), template)


def _lay_out(m: RepoMutant, root: Path) -> None:
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "README.md").write_text(README)
    (root / m.name).write_bytes(m.design)
    if m.config is not None:
        (root / ".clusterplan.yaml").write_text(m.config, encoding="utf-8")
    if m.manifest is not None:
        import hashlib

        digest = hashlib.sha256(README.encode()).hexdigest()
        entries = {k: digest if v == "SHA" else v for k, v in m.manifest.items()}
        (root / ".clusterplan-outputs.json").write_text(json.dumps({"outputs": entries}))
    if m.template is not None:
        for sub in ("sonic/config_db.json.j2", "eos/running-config.j2", "nvue/startup.yaml.j2", "bom/x.j2"):
            (root / "tpl" / sub).parent.mkdir(parents=True, exist_ok=True)
            (root / "tpl" / sub).write_text(m.template, encoding="utf-8")


def _channel_failure(args: list[str], out: str) -> str | None:
    if RUNNER_COMMAND.search(out) and "--format" in args and "github" in args:
        return None             # the annotations format is workflow commands on purpose
    if RUNNER_COMMAND.search(out) or RAW_CONTROL.search(out):
        line = next((x for x in out.splitlines() if RUNNER_COMMAND.search(x) or RAW_CONTROL.search(x)), "")
        return f"printed a workflow command or control character: {line[:200]!r}"
    if "junit" in args and out.strip():
        try:
            ElementTree.fromstring(out.encode("utf-8"))
        except ElementTree.ParseError as exc:
            return f"invalid JUnit XML: {exc}"
    return None


def _commands(name: str) -> list[list[str]]:
    return [["validate", name], ["validate", name, "--format", "md"], ["validate", name, "--format", "junit"],
            ["render", name, "-o", "out"], ["bom", name, "--template", "x"], ["bom", name, "--format", "rfq"],
            ["outputs", "--check"], ["outputs"]]


def _tree(root: Path) -> dict[str, Any]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / ".git").rglob("*"))
            if p.is_file()}


def run_repo(m: RepoMutant, workdir: Path) -> Outcome:
    """The mutant laid out as a repository under `workdir` and run through every command above."""
    root = workdir / "repo"
    shutil.rmtree(root, ignore_errors=True)
    _lay_out(m, root)
    before = _tree(root)
    cwd = os.getcwd()
    failure = None
    os.chdir(root)
    import dataclasses

    import validator.emit.render.sandbox as sandbox
    from validator.base.limits import limits

    short = dataclasses.replace(limits(), template_seconds=1)    # a loop bomb costs a second, not ten
    sandbox.limits = lambda: short
    try:
        for args in _commands(m.name):
            code, out, err = _entry_point(args)
            failure = _failure(code, out, err) or _channel_failure(args, out)
            if failure:
                shown = " ".join("NAME" if a == m.name else a for a in args)
                failure = f"`{shown}`: {failure}"
                break
    except Exception:
        failure = traceback.format_exc()
    finally:
        os.chdir(cwd)
        sandbox.limits = limits
    if failure is None and (_tree(root) != before or (root / "README.md").read_text() != README
                            or (workdir / "outside.json").exists()):
        failure = "a file under .git/, README.md or outside the repository changed"
    return Outcome(failure, 0.0, 0, failure is None)
