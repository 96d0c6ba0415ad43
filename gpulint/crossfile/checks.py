"""Cross-file checks (GL7xx): the linted set as one picture, from a pod's
`runtimeClassName` to the RuntimeClass to the handler in the node's containerd
or Docker configuration.

A handler counts as defined when any linted node configuration defines it, so
a repository with several node pools is only faulted when none could run it.
"""

from __future__ import annotations

from gpulint.crossfile.imagemap import mapped_dockerfile
from gpulint.crossfile.nodes import node_configs
from gpulint.formats.template import includes_template, is_placeholder
from gpulint.kinds.containerd.facts import effective_cri, file_majors
from gpulint.kinds.kubernetes.facts import (
    GPU_OPERATOR_RUNTIME_CLASSES,
    env_vars,
    gpu_limits,
    is_handler_name,
    is_kustomize_patch,
    is_nvml_daemon,
    node_selection,
    object_name,
    pod_specs,
    requests_gpus,
    runtime_classes,
    scalar_str,
)
from gpulint.knowledge.images import cuda_image, drops_driver_path
from gpulint.model import Document, Related, Span
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

# RuntimeClasses that platforms create themselves: the GPU Operator's, and GKE
# Sandbox's `gvisor`.
PROVIDED_RUNTIME_CLASSES = (*GPU_OPERATOR_RUNTIME_CLASSES, "gvisor")


def _runtime_classes(ctx: Context):
    """(document, RuntimeClass object) for every RuntimeClass in the linted set."""
    for doc in ctx.of_kind("kubernetes"):
        for obj in runtime_classes(doc):
            yield doc, obj


def _classes_by_name(ctx: Context) -> dict:
    """name -> (document, RuntimeClass object), the first of each name in the linted set."""
    def compute() -> dict:
        classes: dict = {}
        for doc, obj in _runtime_classes(ctx):
            name = object_name(obj)
            if name:
                classes.setdefault(name, (doc, obj))
        return classes

    return ctx.memo("crossfile.classes", compute)


@check("GL701", kinds=("kubernetes",))
def runtime_class_undefined(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        node = pod.spec.get("runtimeClassName")
        name = scalar_str(node)
        if name is None:
            continue
        classes = _classes_by_name(ctx)
        if name in classes or name in PROVIDED_RUNTIME_CLASSES:
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
    configs = node_configs(ctx)
    for doc, obj in _runtime_classes(ctx):
        node = obj.get("handler")
        handler = scalar_str(node)
        # a node defines runc, its declared runtimes, and any a template may render;
        # a name the API server rejects is GL510's, and no runtime table can fix it
        if handler is None or not configs or not is_handler_name(handler) \
                or any(c.defines(handler) and not _runc_dropped(c, handler, ctx.settings) for c in configs):
            continue
        why = ("; containerd 1.6/1.7 keep no built-in `runc` once a config writes its own "
               "`containerd.runtimes` (containerd 2.x does)" if handler == "runc" else "")
        yield finding(
            doc, "GL702", node.span,
            f"RuntimeClass `{object_name(obj) or '?'}` uses handler `{handler}`, which no linted "
            f"node configuration defines{why}: pods of this class fail with \"failed to get sandbox "
            f"runtime: no runtime for \"{handler}\" is configured\"; add a `{handler}` runtime "
            f"to the containerd config (or daemon.json) of the GPU nodes",
            related=[related(*_first_runtime(c), _searched(c)) for c in configs])


def _runc_dropped(config, handler: str, settings) -> bool:
    """containerd 1.x decodes the CRI table with go-toml v1, which replaces the built-in
    runtime map, `runc` included, with the runtimes a config writes (GL101 says the same
    of a default runtime)."""
    return (handler == "runc" and config.kind == "containerd" and bool(config.runtimes)
            and "runc" not in config.runtimes and 1 in file_majors(config.doc, settings)
            and not any(map(is_placeholder, config.runtimes))
            and not any(map(includes_template, config.docs)))


def _first_runtime(config):
    """(document, where) of the config's first runtime, in the main file or the drop-in
    that writes it; the main file's first line when it defines none."""
    entry = next(iter(config.runtimes.values()), None)
    if entry is not None:
        return entry.doc, entry.node
    return config.doc, Span.point(1, 1)


def _searched(config) -> str:
    names = ", ".join(f"`{n}`" for n in sorted(config.runtimes)) or "none"
    what = {"containerd": "containerd config", "daemon-json": "daemon.json"}.get(config.kind, "dockerd's flags")
    return f"{what} searched (runtimes: {names})"


def _non_nvidia_defaults(ctx: Context) -> list:
    """The linted node configs (containerd's, and dockerd's for nodes whose kubelet runs
    on Docker through dockershim or cri-dockerd), when every one has a default runtime other
    than the NVIDIA runtime (none: no config, a default a template decides, or an NVIDIA
    default)."""
    def compute() -> list:
        configs = node_configs(ctx)
        if any(is_placeholder(c.default_runtime) for c in configs) \
                or any(c.default_is_nvidia() for c in configs):
            return []
        return configs

    return ctx.memo("crossfile.non_nvidia_defaults", compute)


@check("GL703", kinds=("kubernetes",))
def device_plugin_without_nvidia_runtime(doc: Document, ctx: Context):
    if is_kustomize_patch(doc):
        return  # the base it is merged into may set the runtime class
    for pod in pod_specs(doc):
        if not is_nvml_daemon(pod) or pod.spec.get("runtimeClassName") is not None:
            continue
        configs = _non_nvidia_defaults(ctx)
        if not configs:
            return
        defaults = ", ".join(sorted({f"`{c.default_runtime}`" for c in configs}))
        docker = all(c.kind != "containerd" for c in configs)
        # dockershim and cri-dockerd run every pod with dockerd's default runtime
        fix = ('register the NVIDIA runtime in daemon.json and make it dockerd\'s default '
               '(`"default-runtime": "nvidia"`)' if docker else "set `runtimeClassName: nvidia` in its pod spec")
        # a daemon.json alone may be a workstation's: its nodes are the kubelet's only through
        # dockershim (before Kubernetes 1.24) or cri-dockerd, which no linted file shows
        where = ("the linted daemon.json configs' default runtime is " + defaults + ", not the NVIDIA "
                 "runtime, so where kubelet runs pods through Docker (dockershim, cri-dockerd)"
                 if docker else f"the linted node configs' default runtime is {defaults}, not the NVIDIA runtime:")
        yield finding(
            doc, "GL703", pod.spec,
            f"{pod.kind} `{pod.name or '?'}` runs an NVIDIA device plugin, feature discovery "
            f"or DCGM container without `runtimeClassName`, and {where} the container gets no "
            f"driver libraries, logs \"could not load NVML library\" and the node advertises no "
            f"GPUs; {fix}",
            severity="warning" if docker else None,
            related=[related(*_default_setting(c), f"default runtime `{c.default_runtime}`")
                     for c in configs])


@check("GL516", kinds=("kubernetes",))
def gpu_pod_without_nvidia_runtime(doc: Document, ctx: Context):
    if is_kustomize_patch(doc):
        return  # the base it is merged into may set the runtime class
    for pod in pod_specs(doc):
        if is_nvml_daemon(pod) or pod.spec.get("runtimeClassName") is not None:
            continue  # the device plugin's own DaemonSet is GL703's
        asking = next((c for c in pod.containers if c.section != "ephemeralContainers" and requests_gpus(c)), None)
        if asking is None:
            continue
        configs = _legacy_gpu_nodes(ctx)
        if not configs:
            return
        limit = next(iter(gpu_limits(asking).values()), None)
        defaults = ", ".join(sorted({f"`{c.default_runtime}`" for c in configs}))
        nvidia = sorted({n for c in configs for n, e in c.runtimes.items() if e.is_nvidia})
        names = ", ".join(f"`{n}`" for n in nvidia)
        yield finding(
            doc, "GL516", limit.key_span if limit is not None and limit.key_span else pod.spec,
            f"{pod.kind} `{pod.name or '?'}` asks for GPUs without `runtimeClassName`, and the linted "
            f"containerd configs run pods with {defaults}, not the NVIDIA runtime they define ({names}): "
            f"the device plugin hands the container its GPUs as `NVIDIA_VISIBLE_DEVICES`, which only the "
            f"NVIDIA runtime acts on, so the container starts without the GPU devices and driver "
            f"libraries (`nvidia-smi: executable file not found`, `Failed to initialize NVML`); set "
            f"`runtimeClassName: {nvidia[0]}` (a RuntimeClass whose handler is `{nvidia[0]}`) or make "
            f"`{nvidia[0]}` the nodes' `default_runtime_name`",
            related=[related(*_default_setting(c), f"default runtime `{c.default_runtime}`") for c in configs])


def _legacy_gpu_nodes(ctx: Context) -> list:
    """The linted containerd configs, when each defines an NVIDIA runtime, none makes it the
    default, and none is read by containerd 2.x only or enables CDI: there CDI can hand the
    GPUs to a pod under runc (the device plugin's `cdi-cri` strategy, the GPU Operator's CDI
    mode), which no manifest shows."""
    def compute() -> list:
        configs = _non_nvidia_defaults(ctx)
        if not configs or any(c.kind != "containerd" for c in configs):
            return []
        if any(not any(e.is_nvidia for e in c.runtimes.values()) or file_majors(c.doc, ctx.settings) == (2,)
               or _enables_cdi(c) for c in configs):
            return []
        if any(_CDI_DEVICE_LIST.search(d.text) for d in ctx.of_kind("device-plugin")):
            return []  # a device plugin config that lists devices through CDI
        return configs

    return ctx.memo("crossfile.legacy_gpu_nodes", compute)


# `deviceListStrategy: cdi-cri` (or a list holding a cdi-* strategy) in a device plugin config
_CDI_DEVICE_LIST = lazy(r"deviceListStrategy[\"']?\s*:[^\n]*cdi-")


def _enables_cdi(config) -> bool:
    found = effective_cri(config.docs)
    node = found[1].get("enable_cdi") if found else None
    return node is not None and node.value is not False


def _default_setting(config):
    """(document, where) of the `default_runtime_name` that decides the default, or
    the main file's start when none is set (containerd then uses runc); for dockerd, the
    daemon.json `default-runtime`."""
    if config.kind != "containerd":
        node = config.doc.tree.get("default-runtime") if config.kind == "daemon-json" else None
        return (config.doc, node) if node is not None else (config.doc, Span.point(1, 1))
    found = effective_cri(config.docs)
    node = found[1].get("containerd", "default_runtime_name") if found else None
    return (found[0], node) if node is not None else (config.doc, Span.point(1, 1))


# GKE labels its GPU nodes with the accelerator type; its device plugin mounts the
# driver at /usr/local/nvidia without the NVIDIA runtime hook, so the image's own
# LD_LIBRARY_PATH must lead there.
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
_DRIVER_DIR = "/usr/local/nvidia/lib64"
_SELF = lazy(r"\$\{?LD_LIBRARY_PATH\b")


@check("GL704", kinds=("kubernetes",))
def gke_driver_path_missing(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        accelerator = node_selection(pod).get(GKE_ACCELERATOR)
        if accelerator is None:
            continue
        nodes = related(doc, accelerator, f"GKE GPU nodes (`{GKE_ACCELERATOR}: {scalar_str(accelerator)}`)")
        for container in pod.containers:
            if not requests_gpus(container):
                continue
            missing = _library_path(ctx, container)
            if missing is None:
                continue
            where, what, value, source = missing
            yield finding(
                doc, "GL704", where,
                f"container `{container.name or '?'}` runs on GKE GPU nodes (`{GKE_ACCELERATOR}: "
                f"{scalar_str(accelerator)}`), which mount the driver at /usr/local/nvidia without the NVIDIA "
                f"runtime hook, but {what} sets LD_LIBRARY_PATH to `{value}`, without {_DRIVER_DIR}: CUDA "
                f"fails with `libcuda.so.1: cannot open shared object file` (`torch.cuda.is_available()` is "
                f"false); add {_DRIVER_DIR} to LD_LIBRARY_PATH",
                related=(nodes, *source))


def _library_path(ctx: Context, container):
    """(where to point, what sets it, the value, related locations) when the container's
    LD_LIBRARY_PATH leaves out the driver path; None when it has it or is not known."""
    for name, _, value in env_vars(container):
        if name == "LD_LIBRARY_PATH":  # the pod's value replaces the image's
            text = scalar_str(value)
            if text is None or _DRIVER_DIR in text:
                return None
            return value.span, "the container's `env`", text, ()
    ref = container.image or ""
    dockerfile = mapped_dockerfile(ctx, ref)
    if dockerfile is not None:
        return _built_library_path(container, dockerfile)
    return _base_library_path(container, ref, ())


def _built_library_path(container, dockerfile: Document):
    # Dockerfile facts and parser: only when a Dockerfile is consulted
    from gpulint.kinds.dockerfile.facts import facts

    final = facts(dockerfile).final if dockerfile.tree is not None else None
    if final is None:
        return None
    env = final.env.get("LD_LIBRARY_PATH")
    if env is not None and _DRIVER_DIR in env.value:
        return None
    if env is not None and not _SELF.search(env.value):
        here = Related(dockerfile.path, env.span.line, env.span.column, "LD_LIBRARY_PATH is set here")
        return (container.image_node.span, f"image `{container.image}` (built by {dockerfile.path})", env.value,
                (here,))
    here = Related(dockerfile.path, final.root.instructions[0].line, 1, f"built on `{final.image}`")
    return _base_library_path(container, final.image or "", (here,))


def _base_library_path(container, ref: str, source: tuple):
    image = cuda_image(ref)
    value = drops_driver_path(image.cuda) if image is not None and image.family == "nvidia-cuda" else None
    if value is None:
        return None
    what = f"image `{container.image}`" + (f", on `{ref}`," if ref != container.image else "")
    return (container.image_node.span, f"{what} (nvidia/cuda 12.8.1 to 12.9.x)", value, source)
