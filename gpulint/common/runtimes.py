"""The runtimes a node has, as containerd's and dockerd's configs declare them: one
record shape for both, built by each kind's facts and joined by the run
(`ctx.fact("node-configs")`)."""

from __future__ import annotations

from gpulint.formats.template import includes_template, is_placeholder
from gpulint.knowledge.runtimes import is_nvidia_handler, is_shim_name
from gpulint.model import Document, Node, Span
from gpulint.record import Record
from gpulint.registry import related


class RuntimeEntry(Record):
    __slots__ = ("name", "doc", "node", "binary", "runtime_type", "is_nvidia")

    name: str
    doc: Document  # where the runtime is defined
    node: Node  # the runtime's table (containerd) or object (daemon.json)
    binary: str | None  # options.BinaryName (containerd) or path (daemon.json)
    runtime_type: str | None
    is_nvidia: bool

    def __init__(self, name: str, doc: Document, node: Node, binary: str | None, runtime_type: str | None,
                 is_nvidia: bool) -> None:
        self.name = name
        self.doc = doc
        self.node = node
        self.binary = binary
        self.runtime_type = runtime_type
        self.is_nvidia = is_nvidia


def configs_with_main(ctx, doc: Document) -> list[NodeConfig]:
    """The linted node configs whose main file is `doc` (`ctx.fact("node-configs")`, looked
    up in an index made once per run: a check asks for every config file)."""
    return _index(ctx)[0].get(id(doc), [])


def configs_loading(ctx, doc: Document) -> list[NodeConfig]:
    """The linted node configs that load `doc`: as their main file or as a merged drop-in."""
    return _index(ctx)[1].get(id(doc), [])


def _index(ctx) -> tuple[dict[int, list], dict[int, list]]:
    def build():
        by_main: dict[int, list] = {}
        by_loaded: dict[int, list] = {}
        for config in ctx.fact("node-configs"):
            by_main.setdefault(id(config.doc), []).append(config)
            for loaded in {id(d): d for d in config.docs}:
                by_loaded.setdefault(loaded, []).append(config)
        return by_main, by_loaded
    return ctx.memo("node-configs.index", build)


class NodeConfig(Record):
    __slots__ = ("doc", "kind", "runtimes", "default_runtime", "docs")

    doc: Document  # the main file
    kind: str  # "containerd" | "daemon-json" | "dockerd" (a systemd unit's flags, no daemon.json linted)
    runtimes: dict[str, RuntimeEntry]
    default_runtime: str | None
    docs: list[Document]  # main + merged drop-ins (+ dockerd's unit), load order

    def __init__(self, doc: Document, kind: str, runtimes: dict[str, RuntimeEntry],
                 default_runtime: str | None, docs: list[Document] | None = None) -> None:
        self.doc = doc
        self.kind = kind
        self.runtimes = runtimes
        self.default_runtime = default_runtime
        self.docs = [] if docs is None else docs

    def defines(self, name: str) -> bool:
        """Whether a runtime handler `name` exists on this node: declared, built in
        (`runc`; for dockerd also containerd shim names), or possibly produced by a
        template expression that stands for a runtime name."""
        if name in self.runtimes or name == "runc":
            return True
        if self.kind in ("daemon-json", "dockerd") and is_shim_name(name):
            return True
        return any(is_placeholder(n) for n in self.runtimes) or any(map(includes_template, self.docs))

    def default_is_nvidia(self) -> bool:
        """Whether pods without a runtime class run with an NVIDIA runtime here: the default
        runtime's entry says so, or an undeclared default is named like one."""
        entry = self.runtimes.get(self.default_runtime)
        return entry.is_nvidia if entry is not None else is_nvidia_handler(self.default_runtime or "", None)


class PluginRuntimeGap(Record):
    """Why a device plugin deployed without `runtimeClassName` gets no driver libraries: the
    linted containerd configs all run pods with another runtime than the NVIDIA one."""

    __slots__ = ("configs", "handler", "defaults")

    configs: list  # the containerd NodeConfigs
    handler: str  # the NVIDIA runtime they define (a RuntimeClass handler to name)
    defaults: str  # their default runtimes, as a message lists them

    def __init__(self, configs: list, handler: str, defaults: str) -> None:
        self.configs = configs
        self.handler = handler
        self.defaults = defaults

    def message(self, what: str, fix: str) -> str:
        """`what` (the deployment without a runtime class), the effect, and `fix`."""
        return (f"{what}, and the linted containerd configs run pods with {self.defaults}, not the NVIDIA "
                f"runtime: the plugin gets no driver libraries, logs \"could not load NVML library\" and the "
                f"nodes advertise no GPUs; {fix} (with a RuntimeClass whose handler is `{self.handler}`)")

    def where(self) -> list:
        """The configs whose default decides, as related locations."""
        return [related(c.doc, Span.point(1, 1), f"default runtime `{c.default_runtime}`") for c in self.configs[:3]]


def plugin_runtime_gap(configs) -> PluginRuntimeGap | None:
    """The gap when every linted node config is containerd's and none runs pods with an NVIDIA
    runtime by default (none when a template decides the default, or a config is dockerd's)."""
    if not configs or any(c.kind != "containerd" or is_placeholder(c.default_runtime) or c.default_is_nvidia()
                          for c in configs):
        return None
    nvidia = sorted({n for c in configs for n, e in c.runtimes.items() if e.is_nvidia})
    return PluginRuntimeGap(list(configs), nvidia[0] if nvidia else "nvidia",
                            ", ".join(sorted({f"`{c.default_runtime}`" for c in configs})))
