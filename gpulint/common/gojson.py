"""How Go's encoding/json names the JSON type of a value in its decode errors (`json: cannot
unmarshal string into Go value of type ...`), for the readers that decode files with it:
dockerd's daemon.json and the device plugin's config (YAML turned into JSON first)."""

from __future__ import annotations

from gpulint.model import Node


def json_type(node: Node) -> str:
    """The JSON type name Go's decoder uses in its errors."""
    if node.is_map:
        return "object"
    if node.is_seq:
        return "array"
    value = node.value
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "string"
