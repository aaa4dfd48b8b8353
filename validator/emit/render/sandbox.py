"""A design repository's templates are untrusted code (docs/security.md): they render in Jinja's
immutable sandbox, on deep copies of the facts, within a budget of time and text, and any failure is
one message `template NAME:LINE: message` (exit 1).

- No mutating call on anything handed over: `ImmutableSandboxedEnvironment` refuses the mutating methods
  of lists, dicts, sets and deques; a pydantic catalog entry exposes only its fields and properties (no
  `model_*` method, which could change its class); and the context is a deep copy made for each render,
  so nothing a template reaches is an object another design (or a cache) shares.
- A budget per render (`data/limits.yaml`): `template_seconds` of CPU time (not wall time: a loaded CI
  runner does not fail a template that is merely slow), checked at every call, attribute,
  item, filter and loop step; `template_output_chars` of text, checked for each value a call, filter or
  operator makes (before `'x' * 10**10` is allocated) and for the whole output.
"""

from __future__ import annotations

import copy
import math
import re
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from validator.base.limits import limits

_BUDGET_FILTER = "clusterplan_loop_budget"      # wraps every `for` loop's iterable (a template may call it too)
_DIGITS = re.compile(r"\d+")
# The width and precision of a conversion: `%-0999d`, `%.999f`, or the spec of a `{...}` field.
_SPECS = re.compile(r"%[-#0 +]*[\d.*]+|\{[^{}]*\}")
_NESTED_FIELD = re.compile(r"\{[^{}]*\{")             # '{:>{width}}': a width taken from an argument
# Filters and str methods whose number arguments are widths, counts or repeats of the text they make.
_SIZED = frozenset(["center", "indent", "wordwrap", "truncate", "batch", "slice", "ljust", "rjust", "zfill",
                    "expandtabs"])


class TemplateBudget(SecurityError):
    """A template went over its budget of time or text."""


class _Clock:
    def __init__(self) -> None:
        self.deadline = math.inf
        self.chars = 0

    def start(self) -> None:
        self.deadline = time.process_time() + limits().template_seconds
        self.chars = limits().template_output_chars

    def tick(self) -> None:
        if time.process_time() > self.deadline:
            raise TemplateBudget(f"took more than {limits().template_seconds} s of CPU time (the budget of one "
                                 "template)")

    def size(self, value: Any) -> Any:
        if isinstance(value, str | bytes | list | tuple) and len(value) > self.chars:
            raise TemplateBudget(f"made a value of {len(value):,} items or characters (the budget is "
                                 f"{self.chars:,})")
        return value


def _big_ints(clock: _Clock, values: Iterable[Any]) -> None:
    """Refuse a width, count or repeat that would make text over the budget before it is made."""
    for v in values:
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > clock.chars:
            raise TemplateBudget(f"a number argument of {v:,} is over the budget of {clock.chars:,} characters")
        if isinstance(v, str) and any(
                len(d) > 7 or int(d) > clock.chars for spec in _SPECS.findall(v) for d in _DIGITS.findall(spec)):
            raise TemplateBudget("a format width over the budget")


def _repeat_size(left: Any, right: Any) -> int:
    if isinstance(left, int) and not isinstance(left, bool) and hasattr(right, "__len__"):
        return int(left) * len(right)
    if isinstance(right, int) and not isinstance(right, bool) and hasattr(left, "__len__"):
        return int(right) * len(left)
    return 0


class UserSandbox(ImmutableSandboxedEnvironment):
    """The environment of a design repository's templates."""

    intercepted_binops = frozenset(["*", "**", "%", "+", "//", "/"])

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.clock = _Clock()

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if not super().is_safe_attribute(obj, attr, value):
            return False
        fields = getattr(type(obj), "model_fields", None)
        if isinstance(fields, dict):       # a pydantic model: its fields and properties only
            return attr in fields or isinstance(getattr(type(obj), attr, None), property)
        return True

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.clock.tick()
        bound = getattr(__obj, "__wrapped__", __obj)     # the sandbox wraps str.format
        text, method = getattr(bound, "__self__", None), getattr(bound, "__name__", "")
        if isinstance(text, str):
            if method == "join" and args and not isinstance(args[0], str | list | tuple):
                args = (list(args[0]), *args[1:])        # sized before it is joined (ranges are bounded)
            _str_method(__self.clock, text, method, args, kwargs)
        return __self.clock.size(super().call(__context, __obj, *args, **kwargs))

    def getattr(self, obj: Any, attribute: str) -> Any:
        self.clock.tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        self.clock.tick()
        return super().getitem(obj, argument)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        self.clock.tick()
        if operator == "*" and _repeat_size(left, right) > self.clock.chars:
            raise TemplateBudget(f"a repetition over the budget of {self.clock.chars:,} items")
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and \
                abs(right) * math.log2(abs(left) + 2) > 64 * 1024:
            raise TemplateBudget("a power over the budget")
        if operator == "%" and isinstance(left, str):
            _big_ints(self.clock, [left, *(right if isinstance(right, tuple) and "*" in left else ())])
        return self.clock.size(super().call_binop(context, operator, left, right))

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, _BUDGET_FILTER, [], [], None, None, lineno=loop.lineno)
        return tree

    def budgeted(self, filters: dict[str, Callable[..., Any]]) -> None:
        """Every filter under the budget, and the loop filter the parser puts around every iterable."""
        for name, function in list(filters.items()):
            filters[name] = self._filter(name, function)
        filters[_BUDGET_FILTER] = self._loop

    def _filter(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        passes = getattr(function, "jinja_pass_arg", None) is not None    # a context first, then the value

        def budgeted(*args: Any, **kwargs: Any) -> Any:
            self.clock.tick()
            data = list(args[1:] if passes else args)
            if name == "join" and data and not isinstance(data[0], str):    # sized: materialised (ranges are bounded)
                data[0] = list(data[0])
                args = (*args[:1], *data) if passes else tuple(data)
            _filter_budget(self.clock, name, data, kwargs)
            return self.clock.size(function(*args, **kwargs))

        for attr in ("jinja_pass_arg", "__name__"):    # pass_context / pass_environment markers
            if hasattr(function, attr):
                setattr(budgeted, attr, getattr(function, attr))
        return budgeted

    def _loop(self, iterable: Any) -> Iterator[Any]:
        for item in iterable:
            self.clock.tick()
            yield item

    def render(self, template: Any, context: dict[str, Any]) -> str:
        """The text of `template` rendered on a deep copy of `context`, within the budget."""
        given = copy.deepcopy(context)
        self.clock.start()          # the budget is the template's own time, not the copy's
        parts: list[str] = []
        left = self.clock.chars
        for chunk in template.generate(**given):
            self.clock.tick()
            left -= len(chunk)
            if left < 0:
                raise TemplateBudget(f"wrote more than {self.clock.chars:,} characters (the budget of one template)")
            parts.append(chunk)
        return "".join(parts)


def _filter_budget(clock: _Clock, name: str, data: list[Any], kwargs: dict[str, Any]) -> None:
    """Refuse a filter call that would make text over the budget, before it is made (`data`: the value
    and the arguments)."""
    if name == "format" and data and isinstance(data[0], str):    # "%-9d" | format(value)
        _big_ints(clock, [data[0], *(data[1:] if "*" in data[0] else ())])
    elif name in _SIZED:
        _big_ints(clock, [*data[1:], *kwargs.values()])
    elif name == "replace" and data and isinstance(data[0], str):
        _str_method(clock, data[0], "replace", tuple(data[1:]), kwargs)
    elif name == "join" and data and isinstance(data[0], list):
        separator = data[1] if len(data) > 1 else kwargs.get("d", "")
        if isinstance(separator, str):
            _str_method(clock, separator, "join", (data[0],), {})


def _str_method(clock: _Clock, text: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a str method call that would make text over the budget, before it is made."""
    if method in _SIZED or (method in ("format", "format_map") and _NESTED_FIELD.search(text)):
        _big_ints(clock, [*args, *kwargs.values()])
    if method in ("format", "format_map"):
        _big_ints(clock, [text])
    if method == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        count = text.count(args[0]) if args[0] else len(text) + 1
        if len(text) + count * len(args[1]) > clock.chars:
            raise TemplateBudget(f"a replace over the budget of {clock.chars:,} characters")
    if method == "join" and args and isinstance(args[0], list | tuple) and \
            len(text) * len(args[0]) > clock.chars:
        raise TemplateBudget(f"a join over the budget of {clock.chars:,} characters")


def template_line(exc: BaseException, files: Iterable[str]) -> int | None:
    """The template line an exception was raised at (Jinja maps its frames to template lines)."""
    names = set(files)
    line = getattr(exc, "lineno", None)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in names or frame.filename.endswith(".j2"):
            line = frame.lineno
    return line if isinstance(line, int) else None


def describe(exc: BaseException) -> str:
    """One line: the exception's message, with its type when the message alone would not say it."""
    from jinja2 import TemplateError as JinjaError
    from jinja2 import TemplateNotFound

    if isinstance(exc, TemplateNotFound):
        return f"template not found: {exc.name}"
    message = str(exc.message if isinstance(exc, JinjaError) and exc.message else exc) or type(exc).__name__
    if isinstance(exc, JinjaError):
        return message
    return f"{type(exc).__name__}: {message}"
