"""The runtimes a node has, as containerd's and dockerd's configs declare them: one
record shape for both, built by each kind's facts and joined by the run
(`ctx.fact("node-configs")`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpulint.formats.template import includes_template, is_placeholder
from gpulint.knowledge.runtimes import is_shim_name
from gpulint.model import Document, Node


@dataclass
class RuntimeEntry:
    name: str
    doc: Document  # where the runtime is defined
    node: Node  # the runtime's table (containerd) or object (daemon.json)
    binary: str | None  # options.BinaryName (containerd) or path (daemon.json)
    runtime_type: str | None
    is_nvidia: bool


@dataclass
class NodeConfig:
    doc: Document  # the main file
    kind: str  # "containerd" | "daemon-json" | "dockerd" (a systemd unit's flags, no daemon.json linted)
    runtimes: dict[str, RuntimeEntry]
    default_runtime: str | None
    docs: list[Document] = field(default_factory=list)  # main + merged drop-ins (+ dockerd's unit), load order

    def defines(self, name: str) -> bool:
        """Whether a runtime handler `name` exists on this node: declared, built in
        (`runc`; for dockerd also containerd shim names), or possibly produced by a
        template expression that stands for a runtime name."""
        if name in self.runtimes or name == "runc":
            return True
        if self.kind in ("daemon-json", "dockerd") and is_shim_name(name):
            return True
        return any(is_placeholder(n) for n in self.runtimes) or any(map(includes_template, self.docs))
