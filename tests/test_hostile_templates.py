"""A design repository's templates are untrusted code (issue 29, docs/security.md): through the real CLI,
a template cannot change what it is given (nor, through a shared cache, what another design produces),
cannot hang or exhaust the run, and every exception it raises is one `template NAME:LINE: message`,
exit 1. In one `outputs` run every design's configurations are those of its own `render`, and a design
that fails alone stays gated."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, cli

EOS = (FIXTURES / "render" / "small-eos.yaml").read_text()
SONIC = EOS.replace("arista-7060x6-64pe", "sonic-th5-64x800")     # lossless SONiC: buffer pools from a cache
FAILING = (Path(__file__).parent / "rules" / "FAC001" / "fail.yaml").read_text()   # an error finding: FAC001
TEMPLATE = "sonic/config_db.json.j2"
# What the attack of issue 29 did: shrink the cached ASIC buffer pool and the cached catalog port groups.
MUTATE = ("{% set _ = d.buffers.pools.ingress_lossless_pool.update({'size': 1}) %}"
          "{% set _ = d.model.port_groups.append(d.model.port_groups[0]) %}{{ d.name | tojson }}")


def _repo(root: Path, designs: dict[str, str], template: str | None = None) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    if template is not None:
        (root / "tpl" / "sonic").mkdir(parents=True, exist_ok=True)
        (root / "tpl" / TEMPLATE).write_text(template)
    for name, text in designs.items():
        (root / name).write_text(text)
    return root


def _own(text: str) -> str:
    return text.replace("kind: TrainingCluster", "kind: TrainingCluster\ntemplates: tpl", 1)


def _configs(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.relative_to(directory).parts[0] == "configs"}


@pytest.mark.parametrize(("template", "message"), [
    ("{{ d.model.port_groups.append(1) }}", "access to attribute 'append' of 'list' object is unsafe."),
    ("{{ d.buffers.pools.update({}) }}", "access to attribute 'update' of 'dict' object is unsafe."),
    ("{{ d.buffers.pools.ingress_lossless_pool.pop('size') }}", "access to attribute 'pop' of 'dict' object is "
                                                                "unsafe."),
    ("{{ d.interfaces.clear() }}", "access to attribute 'clear' of 'list' object is unsafe."),
    ("{{ d.model.model_rebuild(force=true) }}", "access to attribute 'model_rebuild' of 'Switch' object is unsafe."),
])
def test_a_template_cannot_change_what_it_is_given(tmp_path, template, message):
    repo = _repo(tmp_path, {"d.yaml": _own(SONIC)}, template)
    code, _, err = cli("render", str(repo / "d.yaml"), "-o", str(repo / "out"))
    assert (code, err) == (1, f"clusterplan: error: template {TEMPLATE}:1: {message}\n")
    assert not (repo / "out").exists()


def _outputs_equal_standalone(repo: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo)
    (repo / ".clusterplan.yaml").write_text("outputs:\n" + "".join(
        f"  - {{design: {n}.yaml, render: gen/{n}}}\n" for n in ("a", "b", "c")))
    code, _, err = cli("outputs")
    assert code == 1, err         # 1: files were regenerated
    for name in ("a", "b", "c"):
        assert cli("render", f"{name}.yaml", "-o", f"alone/{name}")[0] == 0
        together, alone = _configs(repo / "gen" / name), _configs(repo / "alone" / name)
        assert together == alone and alone, name


def test_outputs_of_several_designs_equal_each_standalone_render(tmp_path, monkeypatch):
    """Design a renders with the repository's template (which reads the buffers and the catalog entry),
    b and c with the built-in ones, in one process: each gets exactly what `render` gives it alone."""
    template = "{{ d.name | tojson }} {{ d.buffers.pools | tojson }} {{ d.model.port_groups | length }}"
    repo = _repo(tmp_path, {"a.yaml": _own(SONIC), "b.yaml": SONIC, "c.yaml": EOS}, template)
    _outputs_equal_standalone(repo, monkeypatch)
    assert b'"size": "165660324"' in (repo / "gen" / "b" / "configs" / "compute" /
                                       "compute-leaf-su001-rail1.config_db.json").read_bytes()


def test_a_template_that_got_past_the_sandbox_still_changes_only_its_own_copy(tmp_path, monkeypatch):
    """Defence in depth: with the sandbox's immutability switched off (as if a mutating method slipped
    through), the template mutates a deep copy; the cached buffers and catalog entry stay as they were."""
    from jinja2.sandbox import SandboxedEnvironment

    from validator.emit.render.sandbox import UserSandbox

    assert issubclass(UserSandbox, SandboxedEnvironment)
    permissive = SandboxedEnvironment.is_safe_attribute

    def allow_mutation(self, obj, attr, value):
        return permissive(self, obj, attr, value)

    monkeypatch.setattr("jinja2.sandbox.ImmutableSandboxedEnvironment.is_safe_attribute", allow_mutation)
    repo = _repo(tmp_path, {"a.yaml": _own(SONIC), "b.yaml": SONIC, "c.yaml": EOS}, MUTATE)
    _outputs_equal_standalone(repo, monkeypatch)


def test_a_design_failing_alone_stays_gated_beside_a_hostile_template(tmp_path, monkeypatch):
    repo = _repo(tmp_path, {"a.yaml": _own(SONIC), "bad.yaml": FAILING}, MUTATE)
    monkeypatch.chdir(repo)
    (repo / ".clusterplan.yaml").write_text("outputs:\n  - {design: a.yaml, render: gen/a}\n"
                                            "  - {design: bad.yaml, render: gen/bad}\n")
    code, _, err = cli("outputs")
    assert code == 1 and "bad.yaml: error findings; nothing is written" in err
    assert not (repo / "gen").exists()
    (repo / ".clusterplan.yaml").write_text("outputs:\n  - {design: a.yaml, render: gen/a}\n")
    code, _, err = cli("outputs")
    assert (code, err.splitlines()[-1]) == (1, f"clusterplan: error: template {TEMPLATE}:1: access to attribute "
                                                "'update' of 'dict' object is unsafe.")
    assert not (repo / "gen").exists()


@pytest.fixture
def short_budget(monkeypatch):
    """A one-second time budget, so that a test of a hanging template takes a second, not ten."""
    from validator.base.limits import limits

    short = dataclasses.replace(limits(), template_seconds=1)
    monkeypatch.setattr("validator.emit.render.sandbox.limits", lambda: short)


@pytest.mark.parametrize(("template", "message"), [
    ("{% set r = range(99999) %}{% for a in r %}{% for b in r %}{% endfor %}{% endfor %}",
     "took more than 1 s of CPU time (the budget of one template)"),
    ("{% for a in range(99999) %}{% for b in range(99999) %}{{ '' }}{% endfor %}{% endfor %}",
     "took more than 1 s of CPU time (the budget of one template)"),
    ("{{ 'x' * 10**10 }}", "a repetition over the budget of 16,000,000 items"),
    ("{{ ('x' * 1000000).replace('x', 'x' * 1000) }}", "a replace over the budget of 16,000,000 characters"),
    ("{{ 'x' | center(10**10) }}", "a number argument of 10,000,000,000 is over the budget of 16,000,000 "
                                   "characters"),
    ("{{ '{:>999999999}'.format(1) }}", "a format width over the budget"),
    ("{{ '%*d' % (10**9, 1) }}", "a number argument of 1,000,000,000 is over the budget of 16,000,000 characters"),
    ("{{ 10 ** (10 ** 10) }}", "a power over the budget"),
    ("{{ range(99999) | join('x' * 15999999) }}", "a join over the budget of 16,000,000 characters"),
    ("{{ ('x' * 999999).join(range(20000) | map('string')) }}", "a join over the budget of 16,000,000 characters"),
    ("{{ ('x' * 1000000) | replace('x', 'x' * 100) }}", "a replace over the budget of 16,000,000 characters"),
    ("{% for i in range(99999) %}{{ 'x' * 9999 }}{% endfor %}", "wrote more than 16,000,000 characters (the "
                                                                "budget of one template)"),
])
def test_a_template_cannot_hang_or_exhaust_the_run(tmp_path, short_budget, template, message):
    repo = _repo(tmp_path, {"d.yaml": _own(SONIC)}, template)
    code, _, err = cli("render", str(repo / "d.yaml"), "-o", str(repo / "out"))
    assert (code, err) == (1, f"clusterplan: error: template {TEMPLATE}:1: {message}\n")


@pytest.mark.parametrize(("template", "message"), [
    ("{}\n\n{{ 1 // 0 }}", "3: ZeroDivisionError: integer division or modulo by zero"),
    ("{% macro f(n) %}{{ f(n) }}{% endmacro %}\n{{ f(1) }}", "1: RecursionError: maximum recursion depth exceeded"),
    ("{\n{% for x in %}", "2: Expected an expression, got 'end of statement block'"),
    ("{}\n{{ no_such_fact }}", "2: 'no_such_fact' is undefined"),
    ("{{ d.name | no_such_filter }}", "1: No filter named 'no_such_filter'."),
    ("{% include 'sonic/missing.j2' %}", "1: template not found: sonic/missing.j2"),
])
def test_every_template_exception_is_one_message_with_its_line(tmp_path, template, message):
    repo = _repo(tmp_path, {"d.yaml": _own(SONIC)}, template)
    code, out, err = cli("render", str(repo / "d.yaml"), "-o", str(repo / "out"))
    assert code == 1 and err.startswith(f"clusterplan: error: template {TEMPLATE}:{message}")
    assert err.count("\n") == 1 and "Traceback" not in out


def test_the_budget_leaves_ordinary_templates_alone(tmp_path, short_budget):
    """Big numbers as values (a buffer size in bytes), digits in text, widths within the budget."""
    template = ('{{ "%d" | format(123456789012) }} {{ "{}: 1234567890123".format(5) }} {{ "%s 99999999999" % 1 }} '
                '{{ "123456789012345" | center(20) }} {{ "%-12s|" % d.name }} {{ 2 ** 40 }} {{ "ab" * 1000 }}')
    repo = _repo(tmp_path, {"d.yaml": _own(SONIC)}, template)
    code, _, err = cli("render", str(repo / "d.yaml"), "-o", str(repo / "out"))
    assert code == 0, err
    text = (repo / "out" / "configs" / "compute" / "compute-leaf-su001-rail1.config_db.json").read_text()
    assert text.startswith("123456789012 5: 1234567890123 1 99999999999   123456789012345    "
                           "compute-leaf-su001-rail1| 1099511627776 abab")
