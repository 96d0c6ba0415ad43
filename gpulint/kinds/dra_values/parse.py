"""NVIDIA DRA driver chart values: one YAML mapping."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.yamlpos import parse_yaml_documents


def parse(text: str, doc):
    roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    if not roots or not roots[0].is_map:
        raise ParseError("NVIDIA DRA driver chart values must be a YAML mapping")
    return roots[0]
