"""What a mig-parted config means: its named configs, each a list of entries that say which
GPUs (`devices`, `device-filter`) get which MIG devices."""

from __future__ import annotations

from typing import Iterator, NamedTuple

from gpulint.kinds.mig_config.parse import Config
from gpulint.knowledge import mig
from gpulint.model import Document, Node, sequence

# where a file of another kind keeps the MIG configs it holds (the GPU Operator's values, a
# manifest's ConfigMaps beside other objects)
HELD = "mig-config.configs"


def configs(doc: Document) -> list[Config]:
    if HELD in doc.cache:
        return doc.cache[HELD]
    return doc.tree or []


def named(root: Node) -> list[tuple[str, Node]]:
    """(name, entry list) of `mig-configs`."""
    table = root.get("mig-configs")
    return list(table.items()) if table is not None and table.is_map else []


def config_names(doc: Document) -> list[str]:
    return [name for config in configs(doc) for name, _ in named(config.root)]


class Entry(NamedTuple):
    config: str  # the name under `mig-configs`
    node: Node

    def get(self, key: str) -> Node | None:
        return self.node.get(key)

    @property
    def profiles(self) -> list[tuple[str, Node, int]]:
        """(profile, its key's node, count) of `mig-devices`, whole-number counts only."""
        devices = self.get("mig-devices")
        if devices is None or not devices.is_map:
            return []
        return [(name, value, value.value) for name, value in devices.items()
                if type(value.value) is int]

    @property
    def filter_ids(self) -> list[tuple[str, Node]] | None:
        """(text, node) of each `device-filter` entry; None when there is no filter."""
        node = self.get("device-filter")
        if node is None or node.tag == "null" or node.value == "":
            return None
        if isinstance(node.value, str):
            return [(node.value, node)]
        return [(item.value, item) for item in sequence(node) if isinstance(item.value, str)]

    @property
    def enabled(self) -> bool | None:
        node = self.get("mig-enabled")
        return node.value if node is not None and isinstance(node.value, bool) else None

    @property
    def devices(self) -> str | frozenset[int] | None:
        """"all", the GPU indexes listed, or None when `devices` is neither."""
        node = self.get("devices")
        if node is None:
            return None
        if node.value == "all":
            return "all"
        if node.is_seq and all(type(i.value) is int for i in node.value):
            return frozenset(i.value for i in node.value)
        return None


def entries(root: Node) -> Iterator[Entry]:
    for name, items in named(root):
        for item in sequence(items):
            if item.is_map:
                yield Entry(name, item)


def filtered_models(entry: Entry) -> list[mig.Model] | None:
    """The GPU models the entry's `device-filter` names; None when it has no filter or names a
    device gpulint's table does not hold (it cannot say what that GPU offers)."""
    ids = entry.filter_ids
    if not ids:
        return None
    found: list[mig.Model] = []
    for text, _ in ids:
        packed = mig.device_id(text)
        models = mig.models_with_id(packed) if packed is not None else []
        if not models:
            return None
        found.extend(m for m in models if m not in found)
    return found


def candidate_models(entry: Entry) -> list[mig.Model]:
    """The models the entry may be meant for: those its filter names, else every model that
    has all its profiles."""
    models = filtered_models(entry)
    if models is not None:
        return models
    names = [p for p, _, _ in entry.profiles]
    return [m for m in mig.models().values() if all(mig.offers(m, p) for p in names)]
