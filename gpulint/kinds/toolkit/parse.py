"""The toolkit's config.toml (TOML) and CDI specs (one JSON or YAML mapping)."""

from __future__ import annotations

from gpulint.formats.errors import ParseError


def parse_toolkit(text: str, doc):
    # TOML only for toolkit configs
    from gpulint.formats.tomlpos import parse_toml

    return parse_toml(text, doc.index)


def parse_cdi(text: str, doc):
    if text.lstrip().startswith("{"):
        # JSON only for a JSON spec
        from gpulint.formats.jsonpos import parse_json

        roots = [parse_json(text, doc.index)]
    else:
        # PyYAML: only for YAML text
        from gpulint.formats.yamlpos import (
            parse_yaml_documents,  # PyYAML only for a YAML spec
        )

        roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    if len(roots) != 1 or not roots[0].is_map:
        raise ParseError("a CDI spec must hold one mapping")
    return roots[0]
