"""Escaping for every syntax clusterplan writes, in one place, so that each writer makes one call.

Design files, their catalogs and their file names come from people the repository owner may not trust
(docs/security.md). Identifiers are already restricted by the schema (validator/read/model.py); what is
left is free text (catalog names, descriptions, waiver reasons, file names, YAML keys quoted back in a
message), and every output escapes it for its own syntax:

- terminal and CI logs: no control or bidirectional-override character is ever printed raw; each is
  shown as a visible escape (`\\x1b`, `\\u202e`), so no escape sequence, line break or workflow command
  can come from a design (`visible`, `terminal_text`);
- spreadsheets (CSV and XLSX): a cell that begins with `=`, `+`, `-`, `@`, tab or carriage return is
  written as text, per the OWASP CSV-injection guidance (a leading `'` in CSV; a text cell with Excel's
  quote prefix in XLSX), unless it is one of clusterplan's own formulas (`Formula`); control characters
  are removed (`cell_text`);
- JSON: never `Infinity` or `NaN` (a non-finite number is unknown: null), and the C1 controls, DEL and
  bidirectional overrides that `json.dumps` leaves raw are written as `\\uXXXX` (`to_json`);
- configuration lines (EOS, NVUE, OpenSM): free text is one line without control characters
  (`one_line`), and a YAML value is a double-quoted scalar (`yaml_string`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from functools import lru_cache
from itertools import chain, compress, repeat
from operator import is_, is_not
from typing import Any

from validator.base.findings import Finding

# C0 controls (tab, CR and LF included), DEL, C1 controls, zero-width and bidirectional formatting
# characters (Trojan Source, CVE-2021-42574), line and paragraph separators, the byte-order mark, lone
# surrogates and the noncharacters U+FFFE/U+FFFF (not allowed in XML: a workbook or JUnit report holding
# one is not a valid file).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"
                     "\ud800-\udfff\ufffe\uffff]")
_EXCEPT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069"
                             "\ufeff\ud800-\udfff\ufffe\uffff]")
_JSON_RAW = re.compile("[\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff"
                       "\ufffe\uffff]")
# What a GitHub Actions runner reads as a workflow command in a log line: `::` at the start of a line
# after white space (actions/runner ActionCommand.TryParseV2 trims the line first), and the legacy
# `##[` anywhere in a line (TryParse looks for it with IndexOf).
_RUNNER_COMMAND = re.compile(r"^(\s*):(?=:)", re.MULTILINE)
EXCEL_MAX = 9.99999999999999e307     # the largest number Excel takes in a cell
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MAX_CELL = 32767    # characters in one Excel cell


class Formula(str):
    """A spreadsheet formula clusterplan itself writes (`=SUM(D2:D9)`); the only strings a sheet keeps as
    formulas. Never build one from design or catalog text."""


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def no_runner_command(text: str) -> str:
    """`text` with nothing a CI runner would execute as a workflow command: a `::` that starts a line
    becomes `\\x3a:`, `##[` becomes `#\\x23[` (the visible escapes of `:` and `#`)."""
    if "::" not in text and "##[" not in text:
        return text
    return _RUNNER_COMMAND.sub(lambda m: m.group(1) + "\\x3a", text).replace("##[", "#\\x23[")


def visible(text: str) -> str:
    """One line for a terminal or a log: every control and formatting character as a visible escape,
    and no workflow command (`no_runner_command`)."""
    return no_runner_command(CONTROL.sub(lambda m: _escape_char(m.group()), text))


def terminal_text(text: str) -> str:
    """Multi-line text for a terminal or a CI log (every stdout channel): line breaks kept, every other
    control character made visible, no line a runner reads as a workflow command."""
    return no_runner_command(_EXCEPT_NEWLINE.sub(lambda m: _escape_char(m.group()), text))


def known(value: float | None) -> float | None:
    """A figure to show: None (unknown) when it is not finite or past what a spreadsheet holds (an
    overflowing price), never `$inf` or a number Excel cannot store."""
    if value is None or (isinstance(value, float) and not (math.isfinite(value) and abs(value) <= EXCEL_MAX)):
        return None
    return value


def one_line(text: str) -> str:
    """Free text for a configuration line or comment: control characters become spaces, runs of spaces
    one space, no leading or trailing space. A line break can never start a new configuration line."""
    return " ".join(CONTROL.sub(" ", text).split())


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar holding `text` on one line (JSON string syntax is valid YAML)."""
    if _AS_IS.fullmatch(text):     # printable ASCII, nothing to escape or collapse: the common case
        return f'"{text}"'
    return json.dumps(one_line(text), ensure_ascii=True)


# Text that `one_line` and `json.dumps` leave as it is: printable ASCII without `"` or `\`, single spaces
# between words, none at either end (one description per port of a 100k-GPU render goes through here).
_AS_IS = re.compile(r'(?:[!#-\[\]-~]+(?: [!#-\[\]-~]+)*)?')


def formula_like(text: str) -> bool:
    """Would a spreadsheet read this cell as a formula (OWASP CSV injection: = + - @ tab CR first,
    also after leading spaces, which some importers trim)?"""
    return text.startswith(FORMULA_START) or text.lstrip(" ").startswith(FORMULA_START)


def cell_text(text: str) -> str:
    """The text of one spreadsheet cell: control characters removed, at most one cell's length."""
    return CONTROL.sub("", text)[:MAX_CELL]


def csv_cell(value: Any) -> Any:
    """A CSV cell: numbers as they are; text without control characters, with a leading `'` when a
    spreadsheet would otherwise evaluate it (OWASP). None is an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _short_csv_text(value) if len(value) <= 100 else _csv_text(value)
    return _finite_or_empty(value)


def _csv_text(value: str) -> str:
    text = cell_text(value)
    return "'" + text if formula_like(text) else text


# A 100k-GPU cabling plan writes ten million cells, most of them short names and part ids that repeat
# (a switch's name on each of its ports): remembered, 65,536 of them at most.
_short_csv_text = lru_cache(maxsize=1 << 16)(_csv_text)


def csv_row(values: Any) -> list[Any]:
    # csv_cell inlined for the two common cells (ten million of them in a 100k-GPU cabling plan)
    return [v if type(v) is int else _short_csv_text(v) if type(v) is str and len(v) <= 100 else csv_cell(v)
            for v in values]


def _finite_or_empty(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    return value


def json_safe(value: Any) -> Any:
    """`value` with every non-finite float replaced by None (null: unknown), recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def to_json(data: Any, *, indent: int | None = 2, sort_keys: bool = True, ensure_ascii: bool = False) -> str:
    """JSON text that any strict parser reads: no Infinity or NaN, no raw control characters."""
    text = fast_json(data, sort_keys) if indent == 2 and not ensure_ascii else None
    if text is None:
        text = _reference_json(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    if not text.isascii() or "\x7f" in text:     # every character _JSON_RAW matches is DEL or above
        text = _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    # a legacy workflow command `##[` inside a string: written as `##\u005b`, the same JSON value, so that
    # JSON printed to a CI log stays valid JSON and executes nothing (no_runner_command)
    return text.replace("##[", "##\\u005b") if "##[" in text else text


def _reference_json(data: Any, *, indent: int | None, sort_keys: bool, ensure_ascii: bool) -> str:
    """The standard library's encoder (its pure-Python form when indented): the reference every faster
    encoding must equal byte for byte."""
    try:     # the common case: nothing to replace, no copy of a large structure
        return json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii, allow_nan=False)
    except ValueError:
        return json.dumps(json_safe(data), indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                          allow_nan=False)


_PLAIN = (str, int, bool, type(None))
_ORJSON_MAX = 1 << 64        # orjson writes integers of 64 bits; a larger one takes the reference encoder


def _plain(data: Any) -> bool:
    """Whether `data` holds only dicts with string keys, lists, strings, integers of 64 bits, booleans
    and None, each of exactly that type: the values orjson writes as `json.dumps` does. A float (its
    repr and orjson's differ: `1e+16` and `1e16`) or any other type sends the data to the reference
    encoder. The data is checked a nesting level at a time, each level's keys and values by the set of
    their types, in C (a 100k-GPU render checks a few hundred million items; a Python step per item or
    per container cost seconds)."""
    if type(data) not in _CONTAINERS:
        return _scalar(data)
    level = [data]
    while level:
        dicts = list(compress(level, map(is_, map(type, level), repeat(dict))))
        if set(map(type, chain.from_iterable(dicts))) - _STR:
            return False
        values = [*chain.from_iterable(map(dict.values, dicts)),
                  *chain.from_iterable(compress(level, map(is_not, map(type, level), repeat(dict))))]
        kinds = set(map(type, values))
        if kinds - _ALLOWED:
            return False
        if int in kinds:
            ints = list(compress(values, map(is_, map(type, values), repeat(int))))
            if min(ints) < -_ORJSON_MAX // 2 or max(ints) >= _ORJSON_MAX:
                return False
        level = list(compress(values, map(_CONTAINERS.__contains__, map(type, values)))) \
            if kinds & _CONTAINERS else []
    return True


def _scalar(item: Any) -> bool:
    kind = type(item)
    return kind in _PLAIN and not (kind is int and not -_ORJSON_MAX // 2 <= item < _ORJSON_MAX)


_STR = frozenset([str])
_CONTAINERS = frozenset([dict, list, tuple])
_ALLOWED = frozenset([*_PLAIN, *_CONTAINERS])


def fast_json(data: Any, sort_keys: bool = True) -> str | None:
    """`json.dumps(data, indent=2, sort_keys=sort_keys, ensure_ascii=False)` by orjson (compiled, 10-20x
    faster than the standard library's indented encoder, which is pure Python), for data `_plain` accepts;
    None otherwise, or when orjson refuses (a lone surrogate, nesting deeper than 254). Its output was
    compared with the reference for every code point, alone and in keys
    (tests/test_fast_json.py); the escaping below (`to_json`) applies to both alike."""
    if not _plain(data):
        return None
    try:
        import orjson
    except ImportError:      # not installed: the reference encoder
        return None
    option = orjson.OPT_INDENT_2 | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(data, option=option).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return None


def printable_finding(finding: Finding) -> Finding:
    """A finding whose texts hold no control character (a YAML key, a value or a file name quoted back
    from a design may hold any): every report format, the terminal and the CI logs get it clean."""
    return replace(finding, message=visible(finding.message), hint=visible(finding.hint),
                   file=visible(finding.file), path=visible(finding.path),
                   waiver_reason=visible(finding.waiver_reason))


_MARKDOWN = re.compile(r"([\\`*_\[\]<>!|@~&#{}])")


def markdown_text(text: str) -> str:
    """Free text in a Markdown job summary or pull-request comment: one line, and every character that
    Markdown or HTML would read as markup (links, images, tags, mentions, table pipes) escaped."""
    return _MARKDOWN.sub(r"\\\1", one_line(text))


def markdown_code(text: str) -> str:
    """Text in a Markdown code span: one line, no backtick to close the span early, and `|` escaped (a
    GitHub table splits cells at a pipe even inside a code span)."""
    return one_line(text).replace("`", "'").replace("|", "\\|")
