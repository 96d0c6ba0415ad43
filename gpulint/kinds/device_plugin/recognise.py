"""A device plugin config: `version: v1` beside `flags:` or `sharing:`, written on its own or
as the text of a ConfigMap's (or the chart's `config.map`) entries."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_VERSION = lazy(r"^(\s*)version:\s*[\"']?v1[\"']?\s*(#.*)?$", re.MULTILINE)
_SECTION = lazy(r"^(\s*)(flags|sharing):\s*(#.*)?$", re.MULTILINE)
# the same text in a double-quoted YAML string, its line breaks written `\n`
_QUOTED = lazy(r"version:\s*v1\\n(.*\\n)?\s*(flags|sharing):\\n")
_TOP_KIND = lazy(r"^kind:\s*[\"']?([A-Za-z]+)", re.MULTILINE)
_TOP_API = lazy(r"^apiVersion:", re.MULTILINE)
_CHART_MAP = lazy(r"^config:\s*(#.*)?\n(?:\s*(#.*)?\n|[ \t]+.*\n)*?[ \t]+map:", re.MULTILINE)


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def _looks_like_config(text: str) -> bool:
    indents = {m[1] for m in _VERSION.finditer(text)}
    return any(m[1] in indents for m in _SECTION.finditer(text)) or _QUOTED.search(text) is not None


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower) or not _looks_like_config(text):
        return None
    kinds = {m[1] for m in _TOP_KIND.finditer(text)}
    if _TOP_API.search(text):
        # a manifest: only a file of ConfigMaps is this kind's (a DaemonSet beside the
        # ConfigMap keeps the file a Kubernetes manifest, checked as such)
        return True if kinds == {"ConfigMap"} else None
    if kinds:
        return None
    if _VERSION.search(text) and any(m[1] == "" for m in _VERSION.finditer(text)):
        return True
    return True if _CHART_MAP.search(text) else None
