"""Where the nodes' NVIDIA driver and GPU come from, most specific first.

GL6xx compares what an image needs with what the nodes run. The nodes are
described, in order of precedence, by:

1. the pod's own node selection: GPU feature discovery labels it insists on
   (`nvidia.com/cuda.driver-version.full|major`, the deprecated
   `nvidia.com/cuda.driver.major`, `nvidia.com/cuda.runtime-version.*` which states
   the highest CUDA directly, and `nvidia.com/gpu.product` for the GPU);
2. the command line: `--driver` and `--gpu-class`;
3. the configuration: `[tool.gpulint.fleet]` driver, gpu-class, gpu;
4. a GPU Operator `ClusterPolicy` in the linted set that installs the driver
   (`spec.driver.version`).

Each fact carries an Origin: words for the message and, where it was written in a
file, the place `related` points at. Nothing is guessed: no source, no driver.
"""

from __future__ import annotations

import re

from gpulint.kinds.kubernetes.facts import (
    PodSpec,
    node_selection,
    object_kind,
    scalar_str,
)
from gpulint.knowledge.cuda import gpu_info
from gpulint.model import Document, Node, Related, Span
from gpulint.numbers import whole
from gpulint.paths import display_path
from gpulint.record import Frozen, freeze
from gpulint.regex import lazy

_DRIVER_PREFIX = lazy(r"(\d{3}(?:\.\d+){0,2})(?:-[A-Za-z].*)?")

# GPU feature discovery labels (current names first, then the deprecated ones)
DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
DRIVER_PARTS = (("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
                 "nvidia.com/cuda.driver-version.revision"),
                ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor",
                 "nvidia.com/cuda.driver.rev"))
RUNTIME_FULL = "nvidia.com/cuda.runtime-version.full"
RUNTIME_PARTS = (("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"),
                 ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"))
PRODUCT_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator")


class Origin(Frozen):
    """Where a fact about the nodes was found.

    description: words for a message ("`--driver 535.104.05`"); path/span: the file
    and place that state it (None for the command line).
    """

    __slots__ = ("description", "path", "span")

    description: str
    path: str | None
    span: Span | None

    def __init__(self, description: str, path: str | None = None, span: Span | None = None) -> None:
        freeze(self, description, path, span)

    def related(self, message: str) -> tuple[Related, ...]:
        if self.path is None or self.span is None:
            return ()
        return (Related(self.path, self.span.line, self.span.column, message),)


class Driver(Frozen):
    """The driver the nodes run. version: "535.104.05" or a branch "535" (None when only
    the CUDA level is known); max_cuda: the highest CUDA it runs natively, when a
    label states it (minor None when only the major is stated)."""

    __slots__ = ("version", "origin", "max_cuda")

    version: str | None
    origin: Origin
    max_cuda: tuple[int, int | None] | None

    def __init__(self, version: str | None, origin: Origin, max_cuda: tuple[int, int | None] | None = None) -> None:
        freeze(self, version, origin, max_cuda)

    @property
    def branch(self) -> int | None:
        return whole(self.version.split(".")[0]) if self.version else None

    @property
    def is_full(self) -> bool:
        return bool(self.version) and "." in self.version


class Gpu(Frozen):
    """The GPU the nodes have: a product name and/or a class (datacenter, consumer,
    workstation, embedded), each with where it was found."""

    __slots__ = ("product", "gpu_class", "product_origin", "class_origin")

    product: str | None
    gpu_class: str | None
    product_origin: Origin | None
    class_origin: Origin | None

    def __init__(self, product: str | None, gpu_class: str | None, product_origin: Origin | None = None,
                 class_origin: Origin | None = None) -> None:
        freeze(self, product, gpu_class, product_origin, class_origin)


class Fleet(Frozen):
    __slots__ = ("driver", "gpu")

    driver: Driver | None
    gpu: Gpu | None

    def __init__(self, driver: Driver | None, gpu: Gpu | None) -> None:
        freeze(self, driver, gpu)

    @property
    def gpu_class(self) -> str | None:
        return self.gpu.gpu_class if self.gpu else None

    @property
    def class_origin(self) -> Origin | None:
        return self.gpu.class_origin if self.gpu else None


def driver_version(text: str | None) -> str | None:
    """"535.104.05", "535", and operator-style "535.104.05-ubuntu22.04" -> the version."""
    match = _DRIVER_PREFIX.fullmatch(text.strip()) if text else None
    return match[1] if match else None


# ------------------------------------------------------------------ precedence


def fleet_for(ctx, pod: PodSpec | None = None, docker_host: bool = False) -> Fleet:
    """The driver and GPU of the nodes `pod` runs on (None: an image outside any pod).

    `docker_host`: the image runs on a Docker host (a dev container, a Compose service, a
    `docker run` line), which the GPU Operator does not manage, so the driver a ClusterPolicy
    or the operator's values install on the cluster's nodes says nothing about it."""
    drivers = [pod_driver(pod) if pod is not None else None, _cli_driver(ctx),
               config_driver(ctx.settings), None if docker_host else cluster_policy_driver(ctx)]
    gpus = [pod_gpu(pod) if pod is not None else None, _cli_gpu(ctx), config_gpu(ctx.settings)]
    return Fleet(next((d for d in drivers if d is not None), None),
                 _merge_gpus([g for g in gpus if g is not None]))


def _merge_gpus(gpus: list[Gpu]) -> Gpu | None:
    """The most specific product, and the most specific class (a known product implies one)."""
    product = next((g for g in gpus if g.product), None)
    klass = next((g for g in gpus if g.gpu_class), None)
    if product is None and klass is None:
        return None
    return Gpu(product.product if product else None, klass.gpu_class if klass else None,
               product.product_origin if product else None, klass.class_origin if klass else None)


def _gpu_from_product(product: str, origin: Origin) -> Gpu:
    info = gpu_info(product)
    return Gpu(product, info.gpu_class if info else None, origin, origin if info else None)


# ------------------------------------------------------------------ 1. the pod


def _label_origin(pod: PodSpec, labels: dict[str, Node], names: list[str]) -> Origin:
    shown = ", ".join(f"`{n}: {scalar_str(labels[n])}`" for n in names)
    first = labels[names[0]]
    return Origin(f"the pod's node selection {shown}", pod.doc.path, first.span)


def pod_driver(pod: PodSpec) -> Driver | None:
    """The driver the pod's GPU feature discovery selectors insist on."""
    labels = node_selection(pod)
    values = {name: scalar_str(node) for name, node in labels.items()}
    version = driver_version(values.get(DRIVER_FULL))
    used = [DRIVER_FULL] if version else []
    for parts in DRIVER_PARTS if version is None else ():
        major = values.get(parts[0])
        if major and re.fullmatch(r"\d{3}", major):
            used = [p for p in parts if values.get(p) and values[p].isdigit()]
            # minor and revision only make a full version together with the major
            version = ".".join(values[p] for p in used) if len(used) == 3 else major
            used = used if len(used) == 3 else [parts[0]]
            break
    max_cuda, runtime_used = _runtime(values)
    if version is None and max_cuda is None:
        return None
    return Driver(version, _label_origin(pod, labels, used + runtime_used), max_cuda)


def _runtime(values: dict[str, str | None]) -> tuple[tuple[int, int | None] | None, list[str]]:
    full = values.get(RUNTIME_FULL)
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", full or "")
    if match:
        return (whole(match[1]), whole(match[2])), [RUNTIME_FULL]
    for major_label, minor_label in RUNTIME_PARTS:
        major, minor = values.get(major_label), values.get(minor_label)
        if major and major.isdigit():
            if minor and minor.isdigit():
                return (whole(major), whole(minor)), [major_label, minor_label]
            return (whole(major), None), [major_label]
    return None, []


def pod_gpu(pod: PodSpec) -> Gpu | None:
    labels = node_selection(pod)
    for name in PRODUCT_LABELS:
        product = scalar_str(labels.get(name))
        if product:
            return _gpu_from_product(product, _label_origin(pod, labels, [name]))
    return None


# ------------------------------------------------------------------ 2. the command line


def _cli_driver(ctx) -> Driver | None:
    """`--driver`, or the driver `gpulint doctor` found on the node (with its origin)."""
    version = driver_version(ctx.options.get("driver"))
    origin = ctx.options.get("driver_origin") or Origin(f"`--driver {version}`")
    return Driver(version, origin) if version else None


def _cli_gpu(ctx) -> Gpu | None:
    """`--gpu-class`, over the GPU `gpulint doctor` found on the node (nvidia-smi's name)."""
    klass = ctx.options.get("gpu_class")
    stated = Gpu(None, klass, None, Origin(f"`--gpu-class {klass}`")) if klass else None
    product = ctx.options.get("gpu_product")
    if not product:
        return stated
    found = _gpu_from_product(product, Origin(f"this node's {product}"))
    return _merge_gpus([g for g in (stated, found) if g is not None])


# ------------------------------------------------------------------ 3. the configuration


def _config_origin(settings, key: str) -> Origin:
    path = settings.path
    value = settings.fleet.get(key)
    where = "[tool.gpulint.fleet]" if path is not None and path.name == "pyproject.toml" else "[fleet]"
    shown = display_path(path) if path is not None else "the configuration"
    node = settings.tree.get("fleet", key) if settings.tree is not None else None
    return Origin(f"`{key} = \"{value}\"` in {where} of {shown}",
                  display_path(path) if path is not None else None,
                  node.span if node is not None else None)


def config_driver(settings) -> Driver | None:
    version = driver_version((settings.fleet or {}).get("driver"))
    return Driver(version, _config_origin(settings, "driver")) if version else None


def config_gpu(settings) -> Gpu | None:
    fleet = settings.fleet or {}
    if fleet.get("gpu"):
        gpu = _gpu_from_product(str(fleet["gpu"]), _config_origin(settings, "gpu"))
        if fleet.get("gpu-class"):  # a stated class beats the one the product implies
            return Gpu(gpu.product, fleet["gpu-class"], gpu.product_origin,
                       _config_origin(settings, "gpu-class"))
        return gpu
    if fleet.get("gpu-class"):
        return Gpu(None, fleet["gpu-class"], None, _config_origin(settings, "gpu-class"))
    return None


# ------------------------------------------------------------------ 4. the GPU Operator


class Declaration(Frozen):
    """A driver version written in a manifest: a ClusterPolicy's or NVIDIADriver's."""

    __slots__ = ("version", "node", "doc", "kind", "name")

    version: str
    node: Node
    doc: Document
    kind: str
    name: str | None

    def __init__(self, version: str, node: Node, doc: Document, kind: str, name: str | None) -> None:
        freeze(self, version, node, doc, kind, name)


HELM_VALUES = "GPU Operator Helm values"


def operator_declarations(doc: Document) -> list[Declaration]:
    """Driver versions a GPU Operator `ClusterPolicy` (driver enabled), `NVIDIADriver` or
    the operator chart's values (`driver.version`, driver enabled) in this document installs."""
    if doc.kind == "gpu-operator-values":
        return _values_declaration(doc)
    out = []
    for obj in doc.tree or ():
        kind = object_kind(obj)
        if kind == "ClusterPolicy":
            driver = obj.get("spec", "driver")
            enabled = scalar_str(driver.get("enabled")) if driver is not None else None
            node = driver.get("version") if driver is not None else None
            if enabled == "false":  # the nodes bring their own driver
                continue
        elif kind == "NVIDIADriver":
            node = obj.get("spec", "version")
        else:
            continue
        version = driver_version(scalar_str(node))
        if version is not None:
            out.append(Declaration(version, node, doc, kind, scalar_str(obj.get("metadata", "name"))))
    return out


def _values_declaration(doc: Document) -> list[Declaration]:
    driver = doc.tree.get("driver") if doc.tree is not None else None
    if driver is None or not driver.is_map or scalar_str(driver.get("enabled")) == "false":
        return []  # the chart's default is enabled; false means the nodes bring their own
    node = driver.get("version")
    version = driver_version(scalar_str(node))
    return [Declaration(version, node, doc, HELM_VALUES, None)] if version else []


def cluster_policy_driver(ctx) -> Driver | None:
    """The driver a ClusterPolicy (or the operator chart's values) in the linted set
    installs on every GPU node.

    Only when every declaration found agrees: a cluster has one, so several
    different ones come from different clusters and say nothing about this pod.
    """
    return ctx.memo("fleet.cluster_policy_driver", lambda: _cluster_policy_driver(ctx))


def _cluster_policy_driver(ctx) -> Driver | None:
    found = [d for kind in ("kubernetes", "gpu-operator-values") for doc in ctx.of_kind(kind)
             for d in operator_declarations(doc) if d.kind in ("ClusterPolicy", HELM_VALUES)]
    if not found or len({d.version for d in found}) != 1:
        return None
    first = found[0]
    if first.kind == HELM_VALUES:
        what = f"the GPU Operator Helm values (`driver.version: {first.version}`)"
    else:
        name = f" `{first.name}`" if first.name else ""
        what = f"the GPU Operator ClusterPolicy{name} (`spec.driver.version: {first.version}`)"
    return Driver(first.version, Origin(what, first.doc.path, first.node.span))
