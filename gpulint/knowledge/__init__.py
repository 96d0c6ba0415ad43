"""Bundled CUDA knowledge: toolkit/driver facts (cuda.py) and the image catalog (images.py)."""

from __future__ import annotations


def lookup_source(sources: list[dict], source_id: str) -> str:
    """The URL of a source ID in a data file's `sources` list (IDs keep the YAML short;
    findings need links). An unknown ID passes through as written."""
    for entry in sources:
        if entry["id"] == source_id:
            return str(entry["url"])
    return source_id
