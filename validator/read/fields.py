"""Field types every part of the design model shares: bounded counts and numbers, catalog ids, and the
frozen, strict base model (unknown keys are errors)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=1, le=10_000_000)]
NonNegCount = Annotated[int, Field(ge=0, le=10_000_000)]
Positive = Annotated[float, Field(gt=0, le=1e9)]
Fraction = Annotated[float, Field(gt=0, le=1)]
CatalogId = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[a-z0-9][a-z0-9._-]*$")]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=True)
