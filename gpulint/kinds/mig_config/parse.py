"""mig-parted configs: the file itself, or each config held as text by a ConfigMap. An
embedded config is read where it is written, so its nodes carry the file's own lines and
columns."""

from __future__ import annotations

from typing import NamedTuple

from gpulint.formats.embedded import embedded_roots
from gpulint.formats.errors import ParseError
from gpulint.model import Node


class Config(NamedTuple):
    name: str  # the ConfigMap key holding it; "" for the file itself
    root: Node
    configmap: str = ""  # the metadata.name of the ConfigMap holding it


def parse(text: str, doc) -> list[Config]:
    # PyYAML only when a config is read: the checks import this module's records
    from gpulint.formats.yamlpos import parse_yaml_documents

    roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    configs: list[Config] = []
    for root in roots:
        if not root.is_map:
            raise ParseError("a MIG config must be a YAML mapping", root.span.line, root.span.column)
        if "apiVersion" not in root.value:
            configs.append(Config("", root))
            continue
        configs.extend(held(text, doc, root.get("data"), configmap_name(root)))
    return configs


def configmap_name(obj: Node) -> str:
    """A ConfigMap's metadata.name ("" for anything else)."""
    kind, name = obj.get("kind"), obj.get("metadata", "name")
    if kind is None or kind.value != "ConfigMap" or name is None or not isinstance(name.value, str):
        return ""
    return name.value


def held(text: str, doc, data: Node | None, configmap: str) -> list[Config]:
    """The MIG configs the string values of `data` (a ConfigMap's, the chart's
    `migManager.config.data`) hold."""
    out = []
    for name, value in data.items() if data is not None and data.is_map else ():
        if isinstance(value.value, str) and "mig-configs" in value.value:
            roots = embedded_roots(text, doc, value, "the embedded MIG config")
            if len(roots) == 1 and roots[0].is_map and "mig-configs" in roots[0].value:
                out.append(Config(name, roots[0], configmap))
    return out
