"""The JSON Schema files under schemas/ that are generated from the models (design, catalog, price book,
rack elevations, and the JSON outputs of validator/emit/output_models.py)."""

from __future__ import annotations

from validator.derive.elevation import racks_schema
from validator.emit.output_models import OUTPUT_MODELS, output_schema
from validator.read.schema import DESIGN_SCHEMA_FILE, generate_design_schema, schema_text
from validator.read.sizing import REQUEST_SCHEMA_FILE, request_schema
from validator.resolve.catalog.entries import catalog_file_schema
from validator.resolve.prices import pricebook_schema


def generated_schemas() -> dict[str, str]:
    """Every schema file generated from the models, by file name under schemas/."""
    return {DESIGN_SCHEMA_FILE: schema_text(generate_design_schema()),
            "clusterplan-catalog.schema.json": schema_text(catalog_file_schema()),
            "pricebook.schema.json": schema_text(pricebook_schema()),
            "racks.schema.json": schema_text(racks_schema()),
            REQUEST_SCHEMA_FILE: schema_text(request_schema()),
            **{file: schema_text(output_schema(model, file)) for file, model in OUTPUT_MODELS.items()}}
