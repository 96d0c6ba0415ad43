"""A Helmfile state file: one or more YAML documents (environments, then releases, in
Helmfile's own layout)."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.formats.yamlpos import parse_yaml_documents


def parse(text: str, doc):
    roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    if any(not r.is_map for r in roots):
        raise ParseError("a Helmfile state file is YAML mappings (`releases:`, `repositories:` ...)")
    return roots
