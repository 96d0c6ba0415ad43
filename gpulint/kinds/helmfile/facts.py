"""The releases a Helmfile state file installs, with what they pass to their chart.

Helmfile writes each inline `values:` mapping to a values file for `helm --values`, and turns
`set:` entries into `--set name=value` and `setString:` into `--set-string` (pkg/state
namespaceAndValuesFlags), so Helm types `set` values as its `--set` does."""

from __future__ import annotations

from gpulint.model import Document, Node, sequence, str_value
from gpulint.record import Frozen, freeze


class Setting(Frozen):
    __slots__ = ("name", "value", "typed")

    name: Node
    value: Node | None
    typed: bool  # `set` (Helm types the value) or `setString`

    def __init__(self, name: Node, value: Node | None, typed: bool) -> None:
        freeze(self, name, value, typed)


class Release(Frozen):
    __slots__ = ("node", "chart", "version", "values", "settings")

    node: Node
    chart: str
    version: Node | None
    values: tuple[Node, ...]  # the inline values mappings (file names are Helm's to read)
    settings: tuple[Setting, ...]

    def __init__(self, node: Node, chart: str, version: Node | None, values: tuple[Node, ...],
                 settings: tuple[Setting, ...]) -> None:
        freeze(self, node, chart, version, values, settings)


def releases(doc: Document) -> list[Release]:
    out = []
    for root in doc.tree or ():
        for item in sequence(root.get("releases")):
            chart = str_value(item.get("chart")) if item.is_map else None
            if not chart:
                continue
            values = tuple(v for v in sequence(item.get("values")) if v.is_map)
            settings = tuple(Setting(entry.get("name"), entry.get("value"), key == "set")
                             for key in ("set", "setString") for entry in sequence(item.get(key))
                             if entry.is_map and entry.get("name") is not None)
            out.append(Release(item, chart, item.get("version"), values, settings))
    return out
