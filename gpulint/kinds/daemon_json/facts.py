"""daemon.json facts: the runtimes it declares and its default runtime."""

from __future__ import annotations

from gpulint.common.runtimes import NodeConfig, RuntimeEntry
from gpulint.knowledge.runtimes import is_nvidia_handler
from gpulint.model import Document, Node, str_value


def daemon_node(doc: Document) -> NodeConfig:
    runtimes: dict[str, RuntimeEntry] = {}
    table = doc.tree.get("runtimes")
    for name, node in table.items() if table is not None else ():
        if not node.is_map:
            continue
        binary = str_value(runtime_field(node, "path")) or str_value(node.get("options", "BinaryName"))
        runtimes[name] = RuntimeEntry(name, doc, node, binary, str_value(runtime_field(node, "runtimeType")),
                                      is_nvidia_handler(name, binary))
    default_node = doc.tree.get("default-runtime")
    default = str_value(default_node) or "runc"
    return NodeConfig(doc, "daemon-json", runtimes, default, [doc])


def runtime_field(entry: Node, name: str) -> Node | None:
    """A runtime field as Go's encoding/json finds it: the exact key, else one that differs
    only in case."""
    exact = entry.get(name)
    if exact is not None:
        return exact
    return next((v for k, v in reversed(list(entry.items())) if k.lower() == name.lower()), None)
