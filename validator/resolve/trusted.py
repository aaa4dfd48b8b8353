"""Models built from the data clusterplan ships, without validating that data again at every start.

The built-in catalog and price books are validated against their models by the test suite
(tests/test_trusted.py validates every entry and every book and checks that `construct` builds the
same objects, value types included). At run time they are constructed directly, and their model
classes defer their schemas (`defer_build`): a schema is built only when a design repository's own
catalog file or price book is validated. That keeps about 40 ms out of every cold start
(docs/performance.md). Never used for a file from a design repository: those are untrusted input.
"""

from collections.abc import Mapping
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator

M = TypeVar("M", bound=BaseModel)


def construct(model: type[M], data: Mapping[str, Any]) -> M:
    """`model` from trusted, already valid data: nested models built, a field's before-validators run,
    and numbers of the field's type (an integer given to a float field, a mapping key read as text), as
    validation would make them."""
    fields = model.model_fields
    return model.model_construct(**{key: _value(fields[key].annotation, value) for key, value in data.items()})


def _value(annotation: Any, value: Any) -> Any:
    origin = get_origin(annotation)
    if origin is Annotated:
        bare, *metadata = get_args(annotation)
        for step in metadata:
            if isinstance(step, BeforeValidator):
                value = step.func(value)   # type: ignore[call-arg]
        return _value(bare, value)
    if origin is Union or origin is UnionType:
        return _member(get_args(annotation), value)
    if origin is list:
        return [_value(get_args(annotation)[0], item) for item in value]
    if origin is dict:
        key_type, value_type = get_args(annotation)
        return {_value(key_type, k): _value(value_type, v) for k, v in value.items()}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return construct(annotation, value)
    if annotation in (int, float) and isinstance(value, int | str) and not isinstance(value, bool):
        return annotation(value)    # mapping keys are read as text (validator/read/loader.py)
    return value


def _member(members: tuple[Any, ...], value: Any) -> Any:
    """A union's value: a mapping is its model member; anything else the first member that is not one."""
    if value is None:
        return None
    for member in members:
        bare = get_args(member)[0] if get_origin(member) is Annotated else member
        is_model = isinstance(bare, type) and issubclass(bare, BaseModel)
        if member is not type(None) and is_model == isinstance(value, Mapping):
            return _value(member, value)
    return value
