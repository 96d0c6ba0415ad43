"""daemon.json: one JSON object, read with positions."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.jsonpos import parse_json


def parse(text: str, doc):
    tree = parse_json(text, doc.index)
    if not tree.is_map:
        raise ParseError("daemon.json must hold one JSON object", tree.span.line, tree.span.column)
    return tree
