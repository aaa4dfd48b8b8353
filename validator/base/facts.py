"""`@fact`: the dataclass of a value computed once and never changed (a derived fact, a result, a record).

To the type checker a `@fact` class is a frozen dataclass (PEP 681 `dataclass_transform`): mypy --strict,
run on every commit, rejects any assignment to one of its fields, as for `@dataclass(frozen=True)`. At
run time it is a plain dataclass with a field-based hash. A frozen dataclass generates two more methods
per class (`__setattr__`, `__delattr__`), each compiled by `exec` when the class is created: on Python
3.11 that came to about 7 % of a cold `clusterplan validate designs/` for the 66 classes on its path
(docs/performance.md), for a guard the type checker already gives. Use `@fact` for every immutable
dataclass; `dataclasses.replace` makes a changed copy.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def fact(cls: type[T], /) -> type[T]: ...


@overload
def fact(*, order: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True)
def fact(cls: type[T] | None = None, /, *, order: bool = False) -> type[T] | Callable[[type[T]], type[T]]:
    def make(c: type[T]) -> type[T]:
        return dataclass(c, order=order, unsafe_hash=True)

    return make if cls is None else make(cls)
