"""The JSON Schema of `clusterplan dcim export` (schemas/dcim.schema.json), generated from these record types.

No postponed annotations here: pydantic reads the TypedDicts at run time (and on Python 3.11 needs
typing_extensions' TypedDict).
"""

from typing import Any, Literal

from typing_extensions import TypedDict


class LocationType(TypedDict):
    name: str
    parent: str | None
    nestable: bool
    content_types: list[str]


class Location(TypedDict):
    name: str
    location_type: Literal["Site", "Hall", "Row"]
    parent: str | None


class Manufacturer(TypedDict):
    name: str


class DeviceType(TypedDict):
    manufacturer: str
    model: str
    u_height: int


class Role(TypedDict):
    name: str
    content_types: list[str]


class Rack(TypedDict):
    name: str
    location: str
    u_height: int
    comments: str


class Device(TypedDict):
    name: str
    device_type: str
    role: str
    location: str
    rack: str
    position: int | None
    face: Literal["front"] | None


class Interface(TypedDict):
    device: str
    name: str
    type: str
    description: str


class Cable(TypedDict):
    a_device: str
    a_interface: str
    z_device: str
    z_interface: str
    label: str
    type: str
    length: int | None
    length_unit: Literal["m"]


class PowerPanel(TypedDict):
    name: str
    location: str


class PowerFeed(TypedDict):
    name: str
    power_panel: str
    rack: str | None
    comments: str


class Objects(TypedDict):
    location_types: list[LocationType]
    locations: list[Location]
    manufacturers: list[Manufacturer]
    device_types: list[DeviceType]
    roles: list[Role]
    racks: list[Rack]
    devices: list[Device]
    interfaces: list[Interface]
    cables: list[Cable]
    power_panels: list[PowerPanel]
    power_feeds: list[PowerFeed]


class Export(TypedDict):
    version: Literal[1]
    site: str
    tag: str
    status: str
    objects: Objects


def dcim_schema() -> dict[str, Any]:
    from pydantic import TypeAdapter

    schema: dict[str, Any] = TypeAdapter(Export).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "clusterplan dcim export"
    return schema
