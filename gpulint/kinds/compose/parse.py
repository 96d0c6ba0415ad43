"""Compose files: one YAML mapping."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.yamlpos import YamlReading, parse_yaml_documents


def parse(text: str, doc):
    reading = YamlReading()
    roots = [r for r in parse_yaml_documents(text, doc.index, reading) if r is not None]
    doc.cache["yaml.duplicates"] = reading.duplicates
    doc.cache["shared.text"] = reading.shared
    if len(roots) > 1 or (roots and not roots[0].is_map):
        raise ParseError("a Compose file must hold one YAML mapping")
    return roots[0] if roots else None
