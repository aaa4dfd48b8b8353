"""The closed vocabularies of the design format (version 1): each becomes an `enum` in the JSON Schema
generated from validator/read/model.py, which imports them from here."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    training = "TrainingCluster"
    inference = "InferenceFleet"


class Cooling(StrEnum):
    air = "air"
    rear_door = "rear-door"
    liquid = "liquid"


class Technology(StrEnum):
    infiniband = "infiniband"
    roce = "roce"
    ethernet = "ethernet"


class TopologyKind(StrEnum):
    rail_optimized = "rail-optimized"
    fat_tree = "fat-tree"
    rail_only = "rail-only"


class Precision(StrEnum):
    fp32 = "fp32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"
    fp4 = "fp4"
    int8 = "int8"
    int4 = "int4"


class Recompute(StrEnum):
    none = "none"
    selective = "selective"
    full = "full"
