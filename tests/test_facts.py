"""`@fact` (validator/base/facts.py): frozen to the type checker, a hashable dataclass at run time."""

import dataclasses

from validator.base.facts import fact


@fact
class _Point:
    x: int
    y: tuple[int, ...] = ()


@fact(order=True)
class _Rank:
    score: float
    name: str


def test_a_fact_compares_hashes_and_copies_by_value():
    a, b = _Point(1, (2,)), _Point(1, (2,))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != _Point(2, (2,))
    assert dataclasses.replace(a, x=5) == _Point(5, (2,)) and a.x == 1
    assert dataclasses.is_dataclass(a) and [f.name for f in dataclasses.fields(a)] == ["x", "y"]
    assert sorted([_Rank(2.0, "b"), _Rank(1.0, "z")])[0].name == "z"


def test_assigning_to_a_fact_field_is_a_type_error():
    from mypy import api

    code = ("from validator.base.facts import fact\n\n\n@fact\nclass P:\n    x: int\n\n\n"
            "p = P(1)\np.x = 2\nprint(p.x)\n")
    import os

    # no cache written (into the checkout, where another worker checks that nothing appears: test_api_docs)
    flags = ["--strict", "--no-incremental", "--cache-dir", os.devnull]
    out, _, status = api.run([*flags, "-c", code])
    assert status == 1 and '<string>:10: error: Property "x" defined in "P" is read-only' in out, out
    clean, _, ok = api.run([*flags, "-c", code.replace("p.x = 2\n", "")])
    assert ok == 0, clean


def test_no_frozen_dataclass_left_in_the_package():
    """Every immutable dataclass is a `@fact` (one convention, and the cheaper one at start-up)."""
    import re

    from tests.helpers import ROOT

    decorator = re.compile(r"^\s*@(dataclasses\.)?dataclass\((.*, )?frozen=True", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "validator").rglob("*.py")
                 if decorator.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
