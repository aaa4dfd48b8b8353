"""The built-in catalog and price books are read from their pre-parsed form and built without
validation at run time (validator/resolve/compiled.py, trusted.py): here every entry and every book is
read from its YAML and validated, and the objects built both ways must be the same, down to the type
of every value."""

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, BeforeValidator, ConfigDict

from validator.read.loader import load_yaml, read_text
from validator.resolve.catalog import BUILTIN_FILES, DATA_DIR, builtin_catalog
from validator.resolve.catalog.entries import ENTRY_TYPES
from validator.resolve.prices import BUILTIN_BOOKS, PRICES_DIR, PriceBook, builtin_books
from validator.resolve.trusted import construct


def _raw(path: Any) -> Any:
    return load_yaml(read_text(path, str(path)), str(path)).data


@pytest.mark.parametrize("name", BUILTIN_FILES)
def test_every_builtin_entry_is_valid_and_built_as_validation_builds_it(name):
    data = _raw(DATA_DIR / f"{name}.yaml")
    model = ENTRY_TYPES[data["kind"]]
    assert data["entries"]
    for raw in data["entries"]:
        validated = model.model_validate(raw)
        built = construct(model, raw)
        assert built == validated and repr(built) == repr(validated), raw["id"]
        assert built.model_fields_set == validated.model_fields_set
        assert builtin_catalog().get(data["kind"], raw["id"]) == validated


@pytest.mark.parametrize("name", BUILTIN_BOOKS)
def test_every_builtin_price_book_is_valid_and_built_as_validation_builds_it(name):
    raw = _raw(PRICES_DIR / f"{name}.yaml")
    validated = PriceBook.model_validate(raw)
    built = construct(PriceBook, raw)
    assert built == validated and repr(built) == repr(validated)
    assert [b.book for b in builtin_books() if b.label == f"built-in {name}"] == [validated]


class _Inner(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)
    rate: float
    tags: list[str] = []


class _Outer(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)
    price: float | _Inner
    maybe: _Inner | None = None
    by_speed: dict[int, float] = {}
    items: list[_Inner] = []
    when: Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int) else v)] | None = None


@pytest.mark.parametrize("raw", [
    {"price": 3},                                           # an integer to a float member of a union
    {"price": {"rate": 2, "tags": ["a"]}},                  # a mapping to the model member
    {"price": 1.5, "maybe": None},
    {"price": 1.5, "maybe": {"rate": 7}, "by_speed": {"400": 2, "800": 1.5}},   # keys read as text
    {"price": 0, "items": [{"rate": 1}, {"rate": 2.5}]},
    {"price": 1, "when": 2026},                             # a before-validator runs
])
def test_construct_matches_validation_on_the_shapes_it_handles(raw: dict[str, Any]):
    validated = _Outer.model_validate(raw)
    built = construct(_Outer, raw)
    assert repr(built) == repr(validated)


def test_only_the_builtin_loaders_skip_validation():
    """Where validation is skipped: `trusted=True` only in the loaders of the files clusterplan ships,
    `construct` only behind a `trusted` flag (a design repository's files are untrusted input)."""
    import ast

    from tests.helpers import ROOT

    found = set()
    for path in sorted((ROOT / "validator").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for call in ast.walk(func):
                if not isinstance(call, ast.Call):
                    continue
                name = getattr(call.func, "id", getattr(call.func, "attr", ""))
                trusted = any(k.arg == "trusted" and getattr(k.value, "value", None) is True for k in call.keywords)
                if trusted or (name == "construct" and path.name != "trusted.py"):
                    found.add((path.relative_to(ROOT).as_posix(), func.name, "trusted=True" if trusted else name))
    assert found == {
        ("validator/resolve/catalog/__init__.py", "builtin_catalog", "trusted=True"),
        ("validator/resolve/catalog/__init__.py", "parse_catalog_file", "construct"),
        ("validator/resolve/prices.py", "builtin_books", "construct"),
    }


def test_compiled_json_is_the_yaml_it_stands_for():
    """validator/resolve/catalog/data/compiled.json is what the loader reads from every built-in YAML
    file; rebuild it with `python -m validator.resolve.compiled` after editing the catalog."""
    from validator.resolve.compiled import COMPILED, compiled_text

    assert COMPILED.read_text(encoding="utf-8") == compiled_text(), \
        "compiled.json is stale: run `python -m validator.resolve.compiled`"


def test_a_yaml_file_that_no_longer_matches_compiled_json_is_read_from_the_yaml(monkeypatch):
    from validator.resolve import compiled

    stale = {"gpus.yaml": {"crc32": 0, "data": {"kind": "gpu", "entries": []}}}
    monkeypatch.setattr(compiled, "_compiled", lambda: stale)
    assert compiled.builtin_data("gpus.yaml") == _raw(DATA_DIR / "gpus.yaml")
    assert compiled.builtin_data("gpus.yaml")["entries"]


def test_the_configuration_of_a_repository_without_one_is_the_validated_default():
    from validator.read.config import NO_CONFIG, RepoConfig, RunConfig, tco_settings

    assert RepoConfig() == NO_CONFIG and repr(NO_CONFIG) == repr(RepoConfig())
    assert RunConfig().repo is NO_CONFIG and tco_settings(NO_CONFIG) == {}
    set_two = RepoConfig.model_validate({"tco": {"pue": 1.3, "utilization": 1}})
    assert tco_settings(set_two) == {"pue": 1.3, "utilization": 1.0}
