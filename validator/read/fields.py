"""Field types every part of the design model shares: bounded counts and numbers, catalog ids, and the
frozen, strict base model (unknown keys are errors).

The modules that declare pydantic models (here, model, inference, sizing, config, the catalog entries and
the price books) do not use `from __future__ import annotations`: pydantic would then compile every
annotation string when the classes are built, about 20 ms of each cold start (docs/performance.md)."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from validator.read import names

Count = Annotated[int, Field(ge=1, le=10_000_000)]
NonNegCount = Annotated[int, Field(ge=0, le=10_000_000)]
Positive = Annotated[float, Field(gt=0, le=1e9)]
Fraction = Annotated[float, Field(gt=0, le=1)]
CatalogId = names.CatalogId     # one policy for every identifier (read/names.py)


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=True)
