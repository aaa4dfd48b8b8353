"""The compiled JSON encoder (orjson, `escape.fast_json`) writes what the standard library's encoder writes,
byte for byte, or declines (issue 33): every code point alone, in a string and as a key; hostile strings
(control characters, bidirectional overrides, quotes, workflow commands); integers at orjson's limits;
and any nesting of the plain values it accepts (hypothesis). The security escaping of docs/security.md
holds on the fast path as on the reference path. The YAML scalar filter's fast path likewise."""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES
from validator.emit import escape
from validator.emit.escape import fast_json, one_line, to_json, yaml_string

HOSTILE = yaml.safe_load((FIXTURES / "hostile" / "free-text.yaml").read_text(encoding="utf-8"))
# what JSON clusterplan writes never holds raw (docs/security.md): C0 and C1 controls, DEL, bidi overrides
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
STRINGS = [*HOSTILE["spreadsheet"], HOSTILE["config"], HOSTILE["terminal"], 'quote " backslash \\ slash /',
           "##[error]x", "::set-output name=a::b",
           "\x00\x01\x08\t\n\x0b\x0c\r\x1b[31m\x7f\x80\x9b\x9f", "\u200b\u200e\u202e\u2028\u2029\u2066\ufeff",
           "\ufffe\uffff", "é 中文 😀 \U0010ffff", "", " ", "  a  b  "]


def reference(data, sort_keys=True):
    return json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=False, allow_nan=False)


def test_orjson_is_the_encoder():
    pytest.importorskip("orjson")
    assert fast_json({"b": ["x"], "a": {}}) == '{\n  "a": {},\n  "b": [\n    "x"\n  ]\n}'


def test_every_code_point_alone_in_a_string_and_as_a_key():
    points = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    chunks = ["".join(map(chr, points[i:i + 64])) for i in range(0, len(points), 64)]
    data = {"strings": chunks, "keys": {chr(c): c for c in points[:0x3000]},
            "high keys": {chr(c) + "k": c for c in points[0x3000::97]}}
    assert fast_json(data) == reference(data)
    assert fast_json(data, sort_keys=False) == reference(data, sort_keys=False)


@pytest.mark.parametrize("text", STRINGS)
def test_hostile_strings_encode_as_the_reference_and_stay_escaped(text):
    data = {text: [text, {"k": text}], "n": None, "t": True}
    assert fast_json(data) == reference(data)
    out = to_json(data)
    assert json.loads(out) == data and not RAW.search(out) and "##[" not in out


def test_declines_what_it_would_write_differently():
    for data in ({"f": 1e16}, [0.1], {1: "int key"}, {"big": 2**64}, {"small": -(2**63) - 1}, "\ud800",
                 {"t": (1, 2.5)}, {"s": {"set"}}):
        assert fast_json(data) is None, data
    assert fast_json([2**64 - 1, -(2**63)]) == reference([2**64 - 1, -(2**63)])
    assert to_json({"f": 1e16, "nan": float("nan")}) == reference({"f": 1e16, "nan": None})
    assert to_json({"lone": "\ud800"}) == '{\n  "lone": "\\ud800"\n}'   # the reference path, then escaped


@pytest.mark.parametrize("text", STRINGS)
def test_to_json_is_the_same_with_and_without_the_fast_encoder(text, monkeypatch):
    data = {"a": [text, {text: 1}], "##[": text}
    fast = to_json(data)
    monkeypatch.setattr(escape, "fast_json", lambda *_a, **_k: None)
    assert fast == to_json(data)


def test_the_indent_and_ascii_forms_it_does_not_write_are_the_references():
    data = {"a": ["é", 1]}
    assert to_json(data, indent=1) == json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False)
    assert to_json(data, ensure_ascii=True) == json.dumps(data, indent=2, sort_keys=True)
    assert to_json(data, indent=None) == json.dumps(data, sort_keys=True, ensure_ascii=False)


SURROGATE = re.compile("[\ud800-\udfff]")
PLAIN = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                     max_leaves=12)


@settings(derandomize=True, max_examples=100)
@given(PLAIN)
def test_any_plain_value_encodes_as_the_reference(data):
    out = fast_json(data)
    has_surrogate = SURROGATE.search(json.dumps(data, ensure_ascii=False)) is not None
    assert out == reference(data) or (out is None and has_surrogate)


class Marked(str):
    """A subclass of str: orjson writes its text, but json.dumps might not (a subclass may override it)."""


MARKED = Marked("marked")
NOT_PLAIN = st.sampled_from([1.5, 1e16, 2**64, -(2**63) - 1, {1: "int key"}, {"set"}, b"bytes", MARKED])


@settings(derandomize=True, max_examples=100)
@given(PLAIN, NOT_PLAIN, st.integers(0, 3))
def test_one_value_it_would_write_differently_anywhere_sends_the_whole_to_the_reference(data, bad, depth):
    """The check goes a nesting level at a time (escape._plain): a float, a too large integer, a non-string
    key or a subclass of str at any depth, beside plain values, is still found."""
    nested: object = bad
    for _ in range(depth):
        nested = {"deeper": [data, nested]}
    assert fast_json([data, {"x": nested}]) is None


@settings(derandomize=True, max_examples=300)
@given(st.text())
def test_yaml_string_fast_path_equals_the_escaped_scalar(text):
    assert yaml_string(text) == json.dumps(one_line(text), ensure_ascii=True)


@pytest.mark.parametrize("text", [*STRINGS, "a b", "sw-1:swp1s0 cable compute-000001", "!~#[]{}`"])
def test_yaml_string_of_hostile_text_is_the_escaped_scalar(text):
    assert yaml_string(text) == json.dumps(one_line(text), ensure_ascii=True)
    assert "\n" not in yaml_string(text)
    if max(text, default=" ") <= "\uffff":     # PyYAML reads a \U escape back as a surrogate pair
        assert yaml.safe_load(f"k: {yaml_string(text)}") == {"k": one_line(text)}


def test_no_orjson_means_the_reference(monkeypatch):
    monkeypatch.setitem(sys.modules, "orjson", None)
    assert fast_json({"a": 1}) is None and to_json({"a": 1}) == reference({"a": 1})
    assert escape.to_json({"a": "\u202e"}) == '{\n  "a": "\\u202e"\n}'
