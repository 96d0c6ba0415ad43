"""devcontainer.json: one object of JSON with comments and trailing commas (JSONC)."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.jsonpos import parse_jsonc


def parse(text: str, doc):
    tree = parse_jsonc(text, doc.index)
    if not tree.is_map:
        raise ParseError("devcontainer.json must hold one JSON object", tree.span.line, tree.span.column)
    return tree
