"""GL521: an NVIDIA device plugin (or GPU feature discovery) container run with a MIG
strategy (`single`, `mixed`) without what reading MIG devices takes.

With MIG enabled, NVML answers a process "Insufficient Permissions" for the memory of MIG
devices unless it holds the driver's MIG monitor capability
(/proc/driver/nvidia/capabilities/mig/monitor and its /dev/nvidia-caps device). The NVIDIA
container runtime hands a container that capability only when it sets
NVIDIA_MIG_MONITOR_DEVICES=all, and refuses the variable in a container without
CAP_SYS_ADMIN ("cannot set MIG_MONITOR_DEVICES in non privileged container",
nvidia-container-runtime-hook). The plugin's Helm chart therefore sets both whenever its
MIG strategy is not `none` (templates/_helpers.tpl `nvidia-device-plugin.requiresCapSysAdmin`,
templates/daemonset-device-plugin.yml); GFD's static MIG manifests set the variable in a
privileged container.
"""

from __future__ import annotations

from gpulint.kinds.kubernetes.facts import Container, env_vars, pod_specs, scalar_str
from gpulint.kinds.kubernetes.support import privilege
from gpulint.model import Document, Node, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

_PLUGIN_IMAGE = lazy(r"(?:^|/)(k8s-device-plugin|gpu-feature-discovery)[:@]")
# `--mig-strategy=mixed`, `-mig-strategy mixed`, inside a word or a shell line
_STRATEGY_FLAG = lazy(r"(?:^|\s)--?mig-strategy(?:=|\s+)(\S+)")
_BARE_FLAG = lazy(r"^--?mig-strategy$")
MIG_STRATEGIES = ("single", "mixed")
MONITOR_ENV = "NVIDIA_MIG_MONITOR_DEVICES"


def _words(container: Container) -> list[Node]:
    return [item for key in ("command", "args") for item in sequence(container.node.get(key))
            if item.is_scalar and item.value is not None]


def _component(container: Container) -> str:
    words = [str(w.value) for w in _words(container)]
    if "gpu-feature-discovery" in (container.image or "") or any("gpu-feature-discovery" in w for w in words):
        return "GPU feature discovery"
    return "device plugin"


# the variables each component reads its MIG strategy from, the first one set winning
# (cmd/nvidia-device-plugin, cmd/gpu-feature-discovery main.go)
_STRATEGY_ENV = {"device plugin": ("MIG_STRATEGY",),
                 "GPU feature discovery": ("GFD_MIG_STRATEGY", "MIG_STRATEGY")}


def _strategy(container: Container, component: str) -> tuple[str, Node, str] | None:
    """(strategy, the node that sets it, how it is set) of the MIG strategy the container
    runs with; a command-line flag wins over the variables (urfave/cli)."""
    words = _words(container)
    for index, word in enumerate(words):
        text = str(word.value)
        match = _STRATEGY_FLAG.search(text)
        if match:
            return match.group(1).strip("'\""), word, "`--mig-strategy`"
        if _BARE_FLAG.match(text.strip()) and index + 1 < len(words):
            return str(words[index + 1].value), word, "`--mig-strategy`"
    given = {name: value for name, _, value in env_vars(container) if value is not None}
    for name in _STRATEGY_ENV[component]:
        text = scalar_str(given[name]) if name in given else None
        if text:
            return text, given[name], name
    return None


def _monitor(container: Container) -> tuple[Node, str | None] | None:
    """(the name node, the value) of NVIDIA_MIG_MONITOR_DEVICES; None when it is not set."""
    for name, name_node, value in env_vars(container):
        if name == MONITOR_ENV:
            return name_node, scalar_str(value) if value is not None else None
    return None


@check("GL521", kinds=("kubernetes",))
def mig_plugin_without_monitor(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        for container in pod.containers:
            if container.section != "containers" or not _PLUGIN_IMAGE.search(container.image or ""):
                continue
            component = _component(container)
            found = _strategy(container, component)
            if found is None or found[0] not in MIG_STRATEGIES:
                continue
            strategy, where, how = found
            label = f"{component} container `{container.name or '?'}`"
            monitor, grant = _monitor(container), privilege(container)
            context = container.node.get("securityContext")
            if grant is None and context is not None and not context.is_map:
                continue  # a template writes the security context: what it grants is unknown
            if monitor is None:
                if container.node.get("envFrom") is not None:
                    continue  # the variable may come from the ConfigMap or Secret named there
                needs = "set NVIDIA_MIG_MONITOR_DEVICES=all" + ("" if grant is not None else
                                                                 " and add the SYS_ADMIN capability")
                plugin = component == "device plugin"
                yield finding(
                    doc, "GL521", where.span,
                    f"{label} runs with MIG strategy `{strategy}` ({how}) without "
                    f"NVIDIA_MIG_MONITOR_DEVICES=all: the NVIDIA container runtime gives it no MIG "
                    f"monitor capability, so NVML answers \"Insufficient Permissions\" for the MIG "
                    f"devices and it stops (\"error getting device memory info: Insufficient "
                    f"Permissions\", k8s-device-plugin#399, #229), leaving the node without "
                    f"{'MIG resources' if plugin else 'MIG labels'}; {needs}, as the device plugin's "
                    f"Helm chart does for a MIG strategy"
                    + ("; privileged as it is, the runtime hook still hides the driver's MIG "
                       "capabilities from a container that does not ask for them "
                       "(nvidia-container-toolkit#198)" if grant is not None else ""),
                    severity="warning" if grant is not None else None)
            elif grant is None and monitor[1]:
                name_node, _ = monitor
                yield finding(
                    doc, "GL521", name_node.span,
                    f"{label} sets {MONITOR_ENV} for MIG strategy `{strategy}` without CAP_SYS_ADMIN "
                    f"(neither `privileged: true` nor `capabilities.add: [SYS_ADMIN]`): the NVIDIA "
                    f"runtime hook refuses to start it (\"cannot set MIG_MONITOR_DEVICES in non "
                    f"privileged container\"), and where the runtime injects CDI devices it gets no "
                    f"MIG monitor device and stops with \"Insufficient Permissions\"; add "
                    f"`securityContext.capabilities.add: [SYS_ADMIN]`, as the device plugin's Helm "
                    f"chart does for a MIG strategy",
                    related=[related(doc, where.span, f"MIG strategy `{strategy}` set here")])
