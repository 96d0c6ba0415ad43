"""What a device plugin config means: its keys placed in the plugin's tables, the shared
resources it advertises, the sharing strategy the plugin picks."""

from __future__ import annotations

from typing import Iterator, NamedTuple

from gpulint.kinds.device_plugin.parse import Config
from gpulint.knowledge import device_plugin as known
from gpulint.model import Document, Node, sequence, str_value


class Key(NamedTuple):
    table: str  # the plugin's table the key is written in (`sharing.mps.resources`)
    key: str  # as written
    node: Node
    spec: dict | None  # the plugin's field (type, since), None when it reads no such key
    exact: bool  # the table looks its keys up exactly (no case folding)


def field(table: str, key: str) -> tuple[dict | None, bool]:
    spec = known.table(table)
    exact = spec["decode"] == "exact"
    if key in spec["keys"]:
        return spec["keys"][key], exact
    if not exact:
        # encoding/json matches a struct's keys in any case
        folded = {k.lower(): v for k, v in spec["keys"].items()}
        return folded.get(key.lower()), exact
    return None, exact


def canonical(table: str, key: str) -> str | None:
    """The plugin's spelling of `key` in `table` (a case variant of a struct key)."""
    spec = known.table(table)
    return next((k for k in spec["keys"] if k.lower() == key.lower()), None)


def keys(root: Node, table: str = "") -> Iterator[Key]:
    """Every key of the config, each with the plugin's table it sits in."""
    for key, child in root.items():
        spec, exact = field(table, key)
        yield Key(table, key, child, spec, exact)
        if spec is None:
            continue
        name = canonical(table, key)
        inner = f"{table}.{name}" if table else name
        if known.table(inner) is None:
            continue
        if spec["type"] == "map" and child.is_map:
            yield from keys(child, inner)
        elif spec["type"] == "list" and child.is_seq:
            for item in child.value:
                if item.is_map:
                    yield from keys(item, inner)


# where a file of another kind keeps the configs it holds (the GPU Operator's values)
HELD = "device-plugin.configs"


def configs(doc: Document) -> list[Config]:
    if HELD in doc.cache:
        return doc.cache[HELD]
    return doc.tree or []


def folded(node: Node | None, *path: str) -> Node | None:
    """The value at `path` through tables decoded as structs: their keys match in any case."""
    for part in path:
        if node is None or not node.is_map:
            return None
        node = next((v for k, v in node.items() if k.lower() == part.lower()), None)
    return node


def flag(root: Node, *path: str) -> Node | None:
    """A key of `flags` in any case, as the plugin matches it."""
    return folded(root, "flags", *path)


def mig_strategy(root: Node) -> str:
    value = str_value(flag(root, "migStrategy"))
    return value if value is not None else "none"


class Shared(NamedTuple):
    strategy: str  # "timeSlicing" or "mps"
    name: str  # the resource shared, prefixed as the plugin prefixes it
    advertised: str  # the name pods ask for: the name, or with `renameByDefault` name.shared
    replicas: int
    node: Node  # the entry


def prefixed(name: str) -> str:
    prefix = known.resource_names()["prefix"] + "/"
    return name if name.startswith(prefix) else prefix + name


def sharing_tables(root: Node) -> list[tuple[str, Node]]:
    """(the plugin's name, table) of `sharing.timeSlicing` and `sharing.mps`, written in any case."""
    found = [(name, folded(root, "sharing", name)) for name in ("timeSlicing", "mps")]
    return [(name, node) for name, node in found if node is not None and node.is_map]


def shared(root: Node) -> list[Shared]:
    """The shared resources the config declares, in the table the plugin uses: with `mps`
    written, the plugin reads only it (sharing.go: ReplicatedResources)."""
    tables = dict(sharing_tables(root))
    strategy = "mps" if "mps" in tables else "timeSlicing"
    table = tables.get(strategy)
    if table is None:
        return []
    by_default = table.get("renameByDefault")
    out = []
    for entry in sequence(table.get("resources")):
        name, replicas = str_value(entry.get("name")), entry.get("replicas")
        if name is None or replicas is None or type(replicas.value) is not int:
            continue
        name = prefixed(name)
        # the plugin sets any other `rename` aside (DisableResourceNamingInConfig)
        renamed = by_default is not None and by_default.value is True
        advertised = name + known.resource_names()["shared_suffix"] if renamed else name
        out.append(Shared(strategy, name, advertised, replicas.value, entry))
    return out


def fails_requests_over_one(root: Node, strategy: str) -> bool:
    """Whether the plugin refuses a request for more than one shared device: MPS defaults
    to true (config.go), time-slicing to false."""
    table = folded(root, "sharing", strategy)
    node = table.get("failRequestsGreaterThanOne") if table is not None and table.is_map else None
    if node is not None and isinstance(node.value, bool):
        return node.value
    return strategy == "mps"
