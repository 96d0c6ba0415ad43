"""Cross-file checks (GL7xx): the linted set as one picture, from a pod's
`runtimeClassName` to the RuntimeClass to the handler in the node's containerd
or Docker configuration.

A handler counts as defined when any linted node configuration defines it, so
a repository with several node pools is only faulted when none could run it.
"""

from __future__ import annotations

from gpulint.k8s import (
    GPU_OPERATOR_RUNTIME_CLASSES,
    is_handler_name,
    is_nvml_daemon,
    object_name,
    pod_specs,
    runtime_classes,
    scalar_str,
)
from gpulint.model import Span
from gpulint.registry import Context, check, finding, related

# RuntimeClasses that platforms create themselves: the GPU Operator's, and GKE
# Sandbox's `gvisor`.
PROVIDED_RUNTIME_CLASSES = (*GPU_OPERATOR_RUNTIME_CLASSES, "gvisor")


def _runtime_classes(ctx: Context):
    """(document, RuntimeClass object) for every RuntimeClass in the linted set."""
    for doc in ctx.of_kind("kubernetes"):
        for obj in runtime_classes(doc):
            yield doc, obj


@check("GL701", project=True)
def runtime_class_undefined(ctx: Context):
    classes = {}
    for doc, obj in _runtime_classes(ctx):
        name = object_name(obj)
        if name:
            classes.setdefault(name, (doc, obj))
    for doc in ctx.of_kind("kubernetes"):
        for pod in pod_specs(doc):
            node = pod.spec.get("runtimeClassName")
            name = scalar_str(node)
            if name is None or name in classes or name in PROVIDED_RUNTIME_CLASSES:
                continue
            if classes:
                known = ", ".join(f"`{n}`" for n in sorted(classes))
                message = (f"runtimeClassName `{name}` names no RuntimeClass in the linted files "
                           f"(they define {known}): the pod is rejected with "
                           f"\"pod rejected: RuntimeClass \"{name}\" not found\" unless the "
                           f"cluster creates it some other way")
                severity = "warning"
            else:
                message = (f"runtimeClassName `{name}` needs a RuntimeClass of that name in the "
                           f"cluster, and none is among the linted files; without one the pod "
                           f"is rejected with \"RuntimeClass \"{name}\" not found\"")
                severity = "info"
            yield finding(doc, "GL701", node.span, message, severity=severity,
                          related=[related(d, o.get("metadata", "name"), f"RuntimeClass `{n}`")
                                   for n, (d, o) in sorted(classes.items())])


@check("GL702", project=True)
def runtime_handler_undefined(ctx: Context):
    from gpulint.nodeconfig import node_configs

    configs = node_configs(ctx)
    for doc, obj in _runtime_classes(ctx):
        node = obj.get("handler")
        handler = scalar_str(node)
        # a node defines runc, its declared runtimes, and any a template may render;
        # a name the API server rejects is GL510's, and no runtime table can fix it
        if handler is None or not configs or not is_handler_name(handler) \
                or any(c.defines(handler) for c in configs):
            continue
        yield finding(
            doc, "GL702", node.span,
            f"RuntimeClass `{object_name(obj) or '?'}` uses handler `{handler}`, which no linted "
            f"node configuration defines: pods of this class fail with \"failed to get sandbox "
            f"runtime: no runtime for \"{handler}\" is configured\"; add a `{handler}` runtime "
            f"to the containerd config (or daemon.json) of the GPU nodes",
            related=[related(*_first_runtime(c), _searched(c)) for c in configs])


def _first_runtime(config):
    """(document, where) of the config's first runtime, in the main file or the drop-in
    that writes it; the main file's first line when it defines none."""
    entry = next(iter(config.runtimes.values()), None)
    if entry is not None:
        return entry.doc, entry.node
    return config.doc, Span.point(1, 1)


def _searched(config) -> str:
    names = ", ".join(f"`{n}`" for n in sorted(config.runtimes)) or "none"
    what = "containerd config" if config.kind == "containerd" else "daemon.json"
    return f"{what} searched (runtimes: {names})"


@check("GL703", project=True)
def device_plugin_without_nvidia_runtime(ctx: Context):
    from gpulint.nodeconfig import is_nvidia_handler, node_configs
    from gpulint.template import is_placeholder

    configs = [c for c in node_configs(ctx) if c.kind == "containerd"]
    if not configs or any(is_placeholder(c.default_runtime) for c in configs):
        return  # no node config, or a default that a template decides
    if any(_default_is_nvidia(c, is_nvidia_handler) for c in configs):
        return
    for doc in ctx.of_kind("kubernetes"):
        for pod in pod_specs(doc):
            if not is_nvml_daemon(pod) or pod.spec.get("runtimeClassName") is not None:
                continue
            defaults = ", ".join(sorted({f"`{c.default_runtime}`" for c in configs}))
            yield finding(
                doc, "GL703", pod.spec,
                f"{pod.kind} `{pod.name or '?'}` runs an NVIDIA device plugin, feature discovery "
                f"or DCGM container without `runtimeClassName`, and the linted containerd "
                f"configs' default runtime is {defaults}, not the NVIDIA runtime: the container "
                f"gets no driver libraries, logs \"could not load NVML library\" and the node "
                f"advertises no GPUs; set `runtimeClassName: nvidia` in its pod spec",
                related=[related(*_default_setting(c), f"default runtime `{c.default_runtime}`")
                         for c in configs])


def _default_is_nvidia(config, is_nvidia_handler) -> bool:
    entry = config.runtimes.get(config.default_runtime)
    return entry.is_nvidia if entry is not None else is_nvidia_handler(config.default_runtime, None)


def _default_setting(config):
    """(document, where) of the `default_runtime_name` that decides the default, or
    the main file's start when none is set (containerd then uses runc)."""
    from gpulint.nodeconfig import effective_cri

    found = effective_cri(config.docs)
    node = found[1].get("containerd", "default_runtime_name") if found else None
    return (found[0], node) if node is not None else (config.doc, Span.point(1, 1))
