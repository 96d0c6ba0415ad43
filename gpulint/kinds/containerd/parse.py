"""containerd configs are TOML, read with positions."""

from __future__ import annotations

from gpulint.formats.tomlpos import parse_toml


def parse(text: str, doc):
    return parse_toml(text, doc.index)
