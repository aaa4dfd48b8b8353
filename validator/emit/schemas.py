"""The JSON Schema files under schemas/ that are generated from the models (design, catalog, price book,
rack elevations, and the JSON outputs of validator/emit/output_models.py, output_models_plan.py and
output_models_estimate.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from validator.derive.elevation import racks_schema
from validator.emit import output_models as out
from validator.emit import output_models_estimate as estimate
from validator.emit import output_models_plan as plan
from validator.emit.dcim_schema import dcim_schema
from validator.read.schema import DESIGN_SCHEMA_FILE, generate_design_schema, schema_text
from validator.read.sizing import REQUEST_SCHEMA_FILE, request_schema
from validator.resolve.catalog.entries import catalog_file_schema
from validator.resolve.prices import pricebook_schema

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_BASE = "https://clusterplan.dev/schemas/"
# the JSON outputs whose schema is generated from their model, by file name under schemas/
OUTPUT_MODELS: dict[str, type[BaseModel]] = {"report.schema.json": out.Report, "describe.schema.json": out.Describe,
                                             "topology.schema.json": out.Topology,
                                             "failures.schema.json": plan.Failures, "bom.schema.json": plan.Bom,
                                             "estimate.schema.json": estimate.Estimate}


def output_schema(model: type[BaseModel], file: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of an output model, as written to schemas/<file>."""
    schema = model.model_json_schema(by_alias=True, ref_template="#/$defs/{model}", mode="serialization")
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_BASE + file, **schema}


def generated_schemas() -> dict[str, str]:
    """Every schema file generated from the models, by file name under schemas/."""
    return {DESIGN_SCHEMA_FILE: schema_text(generate_design_schema()),
            "clusterplan-catalog.schema.json": schema_text(catalog_file_schema()),
            "pricebook.schema.json": schema_text(pricebook_schema()),
            "racks.schema.json": schema_text(racks_schema()),
            "dcim.schema.json": schema_text(dcim_schema()),
            REQUEST_SCHEMA_FILE: schema_text(request_schema()),
            **{file: schema_text(output_schema(model, file)) for file, model in OUTPUT_MODELS.items()}}
