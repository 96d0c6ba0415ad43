"""Device plugin configs: the file itself, or each config held as text by a ConfigMap or the
chart's values. An embedded config is read where it is written, so its nodes carry the
file's own lines and columns."""

from __future__ import annotations

from typing import NamedTuple

from gpulint.formats.embedded import embedded_roots
from gpulint.formats.errors import ParseError
from gpulint.knowledge.device_plugin import chart_values
from gpulint.model import Node


class Config(NamedTuple):
    name: str  # the ConfigMap / `config.map` key holding it; "" for the file itself
    root: Node
    configmap: str = ""  # the metadata.name of the ConfigMap holding it


# where parse keeps the chart values' `config.default` node and the `config.map` keys
CHART_DEFAULT = "device-plugin.chart-default"
# where parse keeps the chart's values (their flag values become the plugin's environment)
CHART_VALUES = "device-plugin.chart-values"


_MARKERS = ("version", "flags", "sharing")


def _is_config(node: Node) -> bool:
    return node.is_map and "version" in node.value and any(k in node.value for k in _MARKERS[1:])


def may_hold_config(text: str) -> bool:
    """Whether a string value is worth reading as a config: it names `version` and `flags` or
    `sharing`, so text that is not valid YAML is reported only when it meant to be one (a broken
    MIG config beside it is not the plugin's)."""
    return _MARKERS[0] in text and any(k in text for k in _MARKERS[1:])


def parse(text: str, doc) -> list[Config]:
    # PyYAML only when a config is read: the checks import this module's records
    from gpulint.formats.yamlpos import parse_yaml_documents

    roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    configs: list[Config] = []
    for root in roots:
        if not root.is_map:
            raise ParseError("a device plugin config must be a YAML mapping")
        chart = not _is_config(root) and any(key in chart_values() for key in root.value)
        if "apiVersion" not in root.value and (_is_config(root) or "config" not in root.value and not chart):
            configs.append(Config("", root))
            continue
        if chart or "apiVersion" not in root.value and root.get("config", "map") is not None:
            doc.cache[CHART_VALUES] = root
        default, names = root.get("config", "default"), root.get("config", "map")
        if default is not None and names is not None and names.is_map:
            doc.cache[CHART_DEFAULT] = (default, list(names.value))
        configmap = configmap_name(root)
        for name, value in _text_values(root):
            found = embedded(text, doc, value)
            if found is not None:
                configs.append(Config(name, found, configmap))
    return configs


def configmap_name(obj: Node) -> str:
    """A ConfigMap's metadata.name ("" for anything else)."""
    kind, name = obj.get("kind"), obj.get("metadata", "name")
    if kind is None or kind.value != "ConfigMap" or name is None or not isinstance(name.value, str):
        return ""
    return name.value


def _text_values(root: Node):
    """(key, node) of the string values that may hold a config: a ConfigMap's `data`, the
    chart's `config.map`."""
    for holder in (root.get("data"), root.get("config", "map")):
        if holder is not None and holder.is_map:
            for name, value in holder.items():
                if isinstance(value.value, str) and may_hold_config(value.value):
                    yield name, value


def embedded(text: str, doc, value: Node) -> Node | None:
    """The device plugin config a string value of the file holds, or None."""
    roots = embedded_roots(text, doc, value, "the embedded device plugin config")
    return roots[0] if len(roots) == 1 and _is_config(roots[0]) else None
