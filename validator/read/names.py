"""The identifier policy and the other constrained names and keys of the design format (docs/security.md).

One policy for every name that becomes a hostname, a file name, a configuration token or a spreadsheet
cell: letters, digits, '-', '_' and '.', starting with a letter or a digit (never '-', '.', '=', '+' or
'@'), at most 63 characters (a DNS label). Free text (descriptions, reasons, owners) is not restricted;
every output escapes it for its own syntax (validator/emit/escape.py). validator/read/model.py uses
these types; the JSON Schema carries them, so an editor and `validate` refuse the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, Field

from validator.base.tables import thresholds

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
IDENTIFIER_MAX = 63
IDENTIFIER_RULE = "letters, digits, '-', '_' and '.', starting with a letter or digit, at most 63 characters"
Identifier = Annotated[str, Field(min_length=1, max_length=IDENTIFIER_MAX, pattern=IDENTIFIER_PATTERN)]
CatalogId = Annotated[str, Field(min_length=1, max_length=IDENTIFIER_MAX, pattern=r"^[a-z0-9][a-z0-9._-]*$",
                                 description="A catalog id: lowercase letters, digits, '.', '_' and '-', at most "
                                 "63 characters.")]
# Device roles clusterplan names devices after: an appliance named like one would be taken for it.
RESERVED_NAMES = ("server", "storage", "leaf", "spine", "core", "rack-system")


def _not_reserved(name: str) -> str:
    if name in RESERVED_NAMES:
        raise ValueError(f"'{name}' is reserved for clusterplan's own devices")
    return name


DeviceName = Annotated[Identifier, AfterValidator(_not_reserved),
                       Field(json_schema_extra={"not": {"enum": list(RESERVED_NAMES)}})]
RuleId = Annotated[str, Field(pattern=r"^[A-Z]{3}[0-9]{3}$", max_length=6,
                              description="A rule ID: three capital letters and three digits, e.g. NET002.")]
# A path the design names (catalogs, templates): any text but control characters; where it may lead is
# checked against the repository boundary (validator/base/paths.py).
FilePath = Annotated[str, Field(min_length=1, max_length=500, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$")]
Dscp = Annotated[str, Field(pattern=r"^([0-9]|[1-5][0-9]|6[0-3])$", description="A DSCP value, 0-63.")]
Money = Annotated[float, Field(ge=0, le=1e12)]
# Threshold names are those of validator/data/thresholds.yaml: a misspelt one is an unknown key.
if TYPE_CHECKING:
    ThresholdName = str
else:
    ThresholdName = Literal[tuple(thresholds())]
