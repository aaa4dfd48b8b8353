"""The estimator's data tables (validator/data/precision.yaml, serving.yaml, intervals.yaml,
efficiency.yaml), each read once into a typed record, as validator/base/tables.py does for the others.
The estimator (validator/derive/estimate/) reads their fields, never `load_data()`. Keys are the tables'
own: a key added to a table is added to its record here."""

from __future__ import annotations

from functools import cache

from validator.base.facts import fact
from validator.base.tables import sourced, value


@fact
class Precision:
    """Number formats (validator/data/precision.yaml): bytes per value, and vLLM's KV block size."""

    bytes: dict[str, float]        # format -> bytes per value
    vllm_block_size: int           # tokens per paged-KV block


@cache
def precision() -> Precision:
    return Precision({str(k): float(v) for k, v in value("precision.yaml", "bytes").items()},
                     int(sourced("precision.yaml")["vllm_block_size"].value))
