"""Find the files that ship with the tool: data, catalog, schemas and templates.

In a wheel, `schemas/` and `templates/` are installed inside the package (see pyproject.toml);
in a source checkout they sit next to the package. Nothing is ever fetched from the network.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

PACKAGE_DIR = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Path:
    """`schemas` or `templates`: inside the installed package, else beside it in a checkout."""
    for candidate in (PACKAGE_DIR / name, PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"clusterplan is missing its {name}/ directory; reinstall the package")


@cache
def load_data(name: str) -> Any:
    """A YAML file from validator/data/, parsed once per process."""
    with open(PACKAGE_DIR / "data" / name, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def data_text(name: str) -> str:
    """A text file from validator/data/ (documentation shipped with the package)."""
    return (PACKAGE_DIR / "data" / name).read_text(encoding="utf-8")


@cache
def load_schema(name: str) -> Any:
    with open(resource_dir("schemas") / name, encoding="utf-8") as fh:
        return json.load(fh)
