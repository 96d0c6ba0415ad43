"""The Kubernetes object model: every pod spec of a manifest, wherever it lives.

A pod spec sits at a different path in each workload kind (a Deployment's
`spec.template.spec`, a CronJob's `spec.jobTemplate.spec.template.spec`, a
PyTorchJob's replica specs, a RayCluster's head and worker groups...). Rules
about pods and containers read `pod_specs(doc)` and never walk those paths
themselves.
"""

from __future__ import annotations

import functools

from gpulint.formats.template import is_placeholder
from gpulint.kinds.kubernetes.kept import consulted
from gpulint.model import Document, Node, place_offsets, sequence
from gpulint.record import Record
from gpulint.regex import lazy, may_match

# `typing` and the registry are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from gpulint.registry import Context

CONTAINER_SECTIONS = ("containers", "initContainers", "ephemeralContainers")

# Paths from the object to each pod spec; "*" is every value of a mapping or
# every item of a sequence. Only one of a kind's alternatives usually exists.
_TEMPLATE = ("spec", "template", "spec")
_RAY_GROUPS = (("headGroupSpec", "template", "spec"), ("workerGroupSpecs", "*", "template", "spec"))
_JOBSET_JOBS = ("replicatedJobs", "*", "template", "spec", "template", "spec")
_POD_SPEC_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "Pod": (("spec",),),
    "Deployment": (_TEMPLATE,),
    "StatefulSet": (_TEMPLATE,),
    "DaemonSet": (_TEMPLATE,),
    "ReplicaSet": (_TEMPLATE,),
    "ReplicationController": (_TEMPLATE,),
    "Rollout": (_TEMPLATE,),  # Argo Rollouts: a Deployment's shape
    "Notebook": (_TEMPLATE,),  # Kubeflow notebooks
    # batch/v1 Job, and Volcano's batch.volcano.sh Job with its tasks
    "Job": (_TEMPLATE, ("spec", "tasks", "*", "template", "spec")),
    "CronJob": (("spec", "jobTemplate", "spec", "template", "spec"),),
    "PodTemplate": (("template", "spec"),),
    "PyTorchJob": (("spec", "pytorchReplicaSpecs", "*", "template", "spec"),),
    "TFJob": (("spec", "tfReplicaSpecs", "*", "template", "spec"),),
    "MPIJob": (("spec", "mpiReplicaSpecs", "*", "template", "spec"),),
    "XGBoostJob": (("spec", "xgbReplicaSpecs", "*", "template", "spec"),),
    "PaddleJob": (("spec", "paddleReplicaSpecs", "*", "template", "spec"),),
    "HyperPodPyTorchJob": (("spec", "replicaSpecs", "*", "template", "spec"),),
    "RayCluster": tuple(("spec", *p) for p in _RAY_GROUPS),
    "RayJob": (*(("spec", "rayClusterSpec", *p) for p in _RAY_GROUPS),
               ("spec", "submitterPodTemplate", "spec")),
    "RayService": tuple(("spec", "rayClusterConfig", *p) for p in _RAY_GROUPS),
    "LeaderWorkerSet": (("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")),
    "JobSet": (("spec", *_JOBSET_JOBS),),
    "TrainingRuntime": (("spec", "template", "spec", *_JOBSET_JOBS),),
    "ClusterTrainingRuntime": (("spec", "template", "spec", *_JOBSET_JOBS),),
    "SandboxTemplate": (("spec", "podTemplate", "spec"),),
    # KServe components inline a pod spec; the model server container sits
    # under a framework key (see _kserve_containers)
    "InferenceService": (("spec", "predictor"), ("spec", "transformer"), ("spec", "explainer")),
}
_KSERVE_FRAMEWORKS = ("model", "pytorch", "tensorflow", "triton", "onnx", "sklearn", "xgboost",
                      "lightgbm", "paddle", "pmml", "huggingface", "art", "alibi")


class Container(Record):
    __slots__ = ("node", "name", "image", "image_node", "section", "resources", "asks_gpus", "env")
    _memo = ("resources", "asks_gpus", "env")

    node: Node
    name: str | None
    image: str | None  # None when absent or templated
    image_node: Node | None
    section: str  # "containers" | "initContainers" | "ephemeralContainers"
    # what `_resources`, `requests_gpus` and `env_vars` answered, worked out once: the rules
    # ask them of each container many times (read only)
    resources: dict
    asks_gpus: bool | None
    env: list | None

    def __init__(self, node: Node, name: str | None, image: str | None, image_node: Node | None, section: str) -> None:
        self.node = node
        self.name = name
        self.image = image
        self.image_node = image_node
        self.section = section
        self.resources = {}
        self.asks_gpus = None
        self.env = None


class PodSpec(Record):
    __slots__ = ("doc", "obj", "kind", "name", "spec", "metadata", "containers", "trail", "gpu_management")
    _memo = ("gpu_management",)

    doc: Document
    obj: Node  # the whole object
    kind: str
    name: str | None  # the object's metadata.name
    spec: Node  # the pod spec
    metadata: Node | None  # the pod template's metadata (the object's for a Pod)
    containers: list[Container]
    # the mappings on the way from the object to the pod spec, both excluded
    # (a Deployment's `spec` and `spec.template`)
    trail: tuple[Node, ...]
    # is_gpu_management's answer, worked out once: the checks ask it for each container
    gpu_management: bool | None

    def __init__(self, doc: Document, obj: Node, kind: str, name: str | None, spec: Node,
                 metadata: Node | None, containers: list[Container] | None = None,
                 trail: tuple[Node, ...] = ()) -> None:
        self.doc = doc
        self.obj = obj
        self.kind = kind
        self.name = name
        self.spec = spec
        self.metadata = metadata
        self.containers = [] if containers is None else containers
        self.trail = trail
        self.gpu_management = None


# Whole values left for a later substitution: `envsubst` variables (`$GPUS`,
# `${GPUS}`) and the GPU Operator's "FILLED BY THE OPERATOR" asset markers.
_SUBSTITUTED = lazy(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|^FILLED[ _]BY[ _](THE[ _])?OPERATOR$")


def scalar_str(node: Node | None) -> str | None:
    """A scalar's text, or None for absent, non-scalar, null, templated and
    yet-to-be-substituted values."""
    # the rules' most frequent question (kinds, names, images, quantities): a string is
    # taken as it is, and only a text that starts like a placeholder is tested for one
    if node is None:
        return None
    value = node.value
    if type(value) is str:
        text = value
    elif not node.is_scalar:
        return None
    else:
        text = node.str()
        if text is None:
            return None
    first = text[:1]
    if (first == "x" and is_placeholder(text)) or (first in ("$", "F") and _SUBSTITUTED.match(text)):
        return None
    return text


# The objects whose facts other files' checks consult: a RuntimeClass (the handler a pod's
# class runs), a ClusterPolicy or NVIDIADriver (the driver the GPU nodes get), a
# KubeletConfiguration (the cgroup driver), and node objects and node-provisioning configs
# (the GPU nodes' taints), a ConfigMap holding a device plugin config (the sharing the
# GPU nodes advertise) and the device plugin's own pods (the release that reads that
# config), and the DRA objects pods' claims name (DeviceClass, ResourceClaim,
# ResourceClaimTemplate, and the NVIDIA ComputeDomain that creates a template), and
# kubeadm's own objects (beside a KubeletConfiguration, they say kubeadm writes its
# cgroup driver). A manifest with none of them is checked on its own.
SHARED_KINDS = ("RuntimeClass", "ClusterPolicy", "NVIDIADriver", "KubeletConfiguration", "Node",
                "NodePool", "InitConfiguration", "JoinConfiguration", "ClusterConfig", "DeviceClass",
                "ResourceClaim", "ResourceClaimTemplate", "ComputeDomain")
_NAMES_SHARED_KIND = lazy(r"\bkind\W+(?:" + "|".join(SHARED_KINDS) + r")\b")


_KUBEADM_OBJECT = lazy(r"\bapiVersion\W+kubeadm\.k8s\.io/")
_CONFIGMAP = lazy(r"\bkind\W+ConfigMap\b")
_PLUGIN_CONFIG_VERSION = lazy(r"\bversion\W+v1\b")
_PLUGIN_IMAGE = lazy(r"k8s-device-plugin:v?\d")


def may_define_shared_object(text: str) -> bool:
    """Whether a manifest's text may hold one of SHARED_KINDS or a device plugin config
    (decided before parsing; a `kind` written through a YAML alias is not seen)."""
    return _found(_NAMES_SHARED_KIND, text) or _found(_PLUGIN_IMAGE, text) or _found(_KUBEADM_OBJECT, text) \
        or (_found(_CONFIGMAP, text) and _found(_PLUGIN_CONFIG_VERSION, text))


def shared_objects(doc) -> list[Node] | None:
    """The objects of a shared manifest that may define a shared object, judged as the file
    was (`may_define_shared_object`) on each object's own text: what other files' checks
    consult (the Deployments and Jobs beside a RuntimeClass are not), each as far as they
    read it (`kept.consulted`: a kubeadm ClusterConfiguration's kind and apiVersion). None
    when that is every object, whole."""
    out = []
    text = doc.text
    for obj in doc.tree:
        place = obj._span
        if type(place) is int and place >= 0:  # the object's text, its lines and columns not worked out
            # (the blanks a trimmed place leaves out match none of the patterns either)
            start, end = place_offsets(place)
        else:
            start, end = doc.index.offsets(place)
        if may_define_shared_object(text[start:end]):
            out.append(consulted(obj))
    return None if len(out) == len(doc.tree) and all(a is b for a, b in zip(out, doc.tree)) else out


def _found(pattern, text: str) -> bool:
    # the literals the pattern needs are looked for first: most manifests name none of these kinds
    return may_match(pattern, text) and pattern.search(text) is not None


def object_kind(obj: Node) -> str | None:
    return scalar_str(obj.get("kind"))


def objects(doc: Document) -> list[tuple[Node, str | None]]:
    """(object, its kind) of each object of a Kubernetes document, in file order (memoised:
    most rules look for objects of a few kinds)."""
    found = doc.cache.get("k8s.objects")
    if found is None:
        found = doc.cache["k8s.objects"] = [(obj, object_kind(obj)) for obj in doc.tree or ()]
    return found


def object_name(obj: Node) -> str | None:
    return scalar_str(obj.get("metadata", "name"))


# The RuntimeClasses the GPU Operator creates; each runs the NVIDIA runtime.
GPU_OPERATOR_RUNTIME_CLASSES = ("nvidia", "nvidia-cdi", "nvidia-legacy")

_DNS_LABEL = lazy(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def is_handler_name(name: str) -> bool:
    """Whether the API server accepts `name` as a RuntimeClass handler (a DNS-1123 label)."""
    return len(name) <= 63 and _DNS_LABEL.match(name) is not None


def runtime_classes(doc: Document) -> list[Node]:
    """The RuntimeClass objects of a Kubernetes document."""
    return [obj for obj, kind in objects(doc) if kind == "RuntimeClass"]


def pod_specs(doc: Document) -> list[PodSpec]:
    """Every pod spec in a Kubernetes document, in file order (memoised)."""
    if "k8s.pod_specs" not in doc.cache:
        doc.cache["k8s.pod_specs"] = [pod for obj, kind in objects(doc) for pod in _object_pods(doc, obj, kind)]
    return doc.cache["k8s.pod_specs"]


def _object_pods(doc: Document, obj: Node, kind: str | None) -> list[PodSpec]:
    pods = []
    for path in _POD_SPEC_PATHS.get(kind or "", ()):
        for trail, spec in _walk(obj, path):
            if not spec.is_map:
                continue
            parent = trail[-1] if trail else obj
            metadata = obj.get("metadata") if kind == "Pod" else parent.get("metadata")
            pod = PodSpec(doc, obj, kind, object_name(obj), spec,
                          metadata if metadata is not None and metadata.is_map else None,
                          _containers(spec, kind), tuple(t for t in trail if t.is_map))
            pods.append(pod)
    return pods


def _walk(node: Node, path: tuple[str, ...]) -> list[tuple[tuple[Node, ...], Node]]:
    """(nodes passed on the way, node reached) for each way of following `path` from `node`."""
    found: list[tuple[tuple[Node, ...], Node]] = [((), node)]
    for part in path:
        step = []
        for trail, current in found:
            children = current.children() if part == "*" else [current.get(part)]
            step.extend((trail + (current,), child) for child in children if child is not None)
        found = step
    return [(trail[1:], reached) for trail, reached in found]


def _containers(spec: Node, kind: str) -> list[Container]:
    out = []
    for section in CONTAINER_SECTIONS:
        items = spec.get(section)
        for item in sequence(items):
            if item.is_map:
                out.append(_container(item, section))
    if kind == "InferenceService":
        out.extend(_container(spec.get(key), "containers") for key in _KSERVE_FRAMEWORKS
                   if spec.get(key) is not None and spec.get(key).is_map)
    return out


def _container(node: Node, section: str) -> Container:
    image_node = node.get("image")
    return Container(node, scalar_str(node.get("name")), scalar_str(image_node), image_node, section)


# The resource kubelet itself allocated NVIDIA GPUs under before device plugins; removed
# in Kubernetes 1.11, so no node advertises it any more. Its `kubernetes.io/` prefix
# makes it a native resource to the API server, not an extended one: it may be
# overcommitted (requests alone, or requests other than limits, pass validation) and
# is not bound to whole numbers.
LEGACY_GPU_RESOURCE = "alpha.kubernetes.io/nvidia-gpu"


def is_device_plugin_resource(name: str) -> bool:
    """A resource an NVIDIA device plugin advertises under `nvidia.com/` (the GPU plugin's
    `nvidia.com/gpu`, MIG profiles, renamed or shared GPUs; the Network Operator's NICs):
    an extended resource, so counted in whole devices, never overcommitted (requests must
    equal limits) and allocated by kubelet's device manager."""
    return name.startswith("nvidia.com/")


# The NVIDIA Network Operator's SR-IOV and RDMA device plugins advertise NICs under
# `nvidia.com/` too (`nvidia.com/hostdev`, `nvidia.com/mlnxics`, `nvidia.com/sriov_*`):
# a pod asking for one asks for a network device, not a GPU.
_NIC_RESOURCE = lazy(r"^nvidia\.com/(hostdev|mlnx|sriov|rdma)")


def is_gpu_resource(name: str) -> bool:
    """A resource a container names to get NVIDIA GPUs: a device plugin resource other
    than the Network Operator's NICs, or the legacy `alpha.kubernetes.io/nvidia-gpu`.
    Rules about the API server's treatment of extended resources ask
    `is_device_plugin_resource` instead."""
    return (is_device_plugin_resource(name) and _NIC_RESOURCE.match(name) is None) or name == LEGACY_GPU_RESOURCE


def _resources(container: Container, section: str, wanted) -> dict[str, Node]:
    found = container.resources.get((section, wanted))
    if found is None:
        entries = container.node.get("resources", section)
        found = {name: value for name, value in entries.items() if wanted(name)} if entries else {}
        container.resources[(section, wanted)] = found
    return found


def gpu_limits(container: Container) -> dict[str, Node]:
    """The container's GPU resources (`is_gpu_resource`) under `resources.limits`."""
    return _resources(container, "limits", is_gpu_resource)


def gpu_requests(container: Container) -> dict[str, Node]:
    """The container's GPU resources (`is_gpu_resource`) under `resources.requests`."""
    return _resources(container, "requests", is_gpu_resource)


def device_plugin_resources(container: Container, section: str) -> dict[str, Node]:
    """The container's `nvidia.com/*` entries under `resources.<section>` (`limits` or
    `requests`): what the API server validates as extended resources."""
    return _resources(container, section, is_device_plugin_resource)


def quantity(node: Node) -> float | None:
    """A plain integer-or-decimal quantity as a number; None for suffixed or templated ones."""
    text = scalar_str(node)
    if text is None or node.tag == "bool":
        return None
    try:
        return float(text)
    except ValueError:
        return None


def requests_gpus(container: Container) -> bool:
    """The container asks for at least one NVIDIA device: any GPU resource limit > 0, or
    a legacy request > 0 (the manifest means GPUs, though no node has that resource).

    A templated count is taken as a request: a chart that templates its GPU
    count is a GPU workload.
    """
    if container.asks_gpus is None:
        container.asks_gpus = _requests_gpus(container)
    return container.asks_gpus


def _requests_gpus(container: Container) -> bool:
    legacy = {name: value for name, value in gpu_requests(container).items() if name == LEGACY_GPU_RESOURCE}
    # the legacy resource could be overcommitted, so its request alone asks for GPUs
    for value in (*gpu_limits(container).values(), *legacy.values()):
        amount = quantity(value)
        if amount is None or amount > 0:
            return True
    return False


def node_selection(pod: PodSpec) -> dict[str, Node]:
    """Node labels the pod insists on: its `nodeSelector`, plus required node-affinity
    `In` expressions that allow exactly one value (label -> that value's Node).

    `nodeSelectorTerms` are alternatives (any one may match), so a label counts only
    when every term requires the same single value for it.
    """
    out: dict[str, Node] = {}
    selector = pod.spec.get("nodeSelector")
    out.update(selector.items() if selector is not None else ())
    terms = pod.spec.get("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                         "nodeSelectorTerms")
    required = [_single_value_labels(term) for term in
                sequence(terms)]
    for key, node in (required[0].items() if required else ()):
        if all(scalar_str(other.get(key)) == scalar_str(node) and key in other
               for other in required[1:]):
            out.setdefault(key, node)
    return out


def _single_value_labels(term: Node) -> dict[str, Node]:
    """Labels one node selector term pins to a single value with `In`."""
    out: dict[str, Node] = {}
    expressions = term.get("matchExpressions")
    for expr in sequence(expressions):
        key, values = scalar_str(expr.get("key")), expr.get("values")
        if (key and scalar_str(expr.get("operator")) == "In" and values is not None
                and values.is_seq and len(values.value) == 1):
            out.setdefault(key, values.value[0])
    return out


def env_vars(container: Container) -> list[tuple[str, Node, Node | None]]:
    """(name, the `name` node, the `value` node or None) for each literal `env` entry."""
    if container.env is None:
        container.env = _env_vars(container)
    return container.env


def _env_vars(container: Container) -> list[tuple[str, Node, Node | None]]:
    env = container.node.get("env")
    out = []
    for item in sequence(env):
        name = scalar_str(item.get("name"))
        if name:
            out.append((name, item.get("name"), item.get("value")))
    return out


# Images of the NVIDIA components that manage GPUs on a node (device plugin,
# feature discovery, DCGM and its exporter, and the GPU Operator's operands):
# they legitimately reach every GPU, the driver directories and the NVIDIA env.
_GPU_MANAGEMENT = lazy(
    r"(^|/)(k8s-device-plugin|gpu-feature-discovery|dcgm-exporter|dcgm|gpu-operator|"
    r"gpu-operator-validator|k8s-driver-manager|container-toolkit|driver|k8s-mig-manager|"
    r"vgpu-device-manager|vgpu-manager|k8s-kata-manager|k8s-cc-manager|kubevirt-gpu-device-plugin|"
    r"k8s-kata-device-plugin|k8s-sandbox-device-plugin|vfio-manager|k8s-mps-control-daemon)"
    r"([:@]|$)")
_NVIDIA_REGISTRY = lazy(r"^(nvcr\.io/nvidia/|nvidia/|ghcr\.io/nvidia/|registry\.k8s\.io/nvidia/)")
# Names the components are deployed under, for charts whose image is templated.
_GPU_MANAGEMENT_NAMES = lazy(
    r"nvidia-device-plugin|gpu-feature-discovery|dcgm-exporter|nvidia-dcgm|nvidia-gfd|"
    r"gpu-operator|nvidia-driver-daemonset|nvidia-container-toolkit|nvidia-mig-manager|"
    r"nvidia-operator-validator|nvidia-cc-manager|nvidia-kata-|nvidia-sandbox-|nvidia-vfio-manager|"
    r"nvidia-vgpu-|nvidia-node-status-exporter")
# The node daemons that load NVML to discover GPUs and so need the NVIDIA runtime.
_NVML_DAEMONS = lazy(r"k8s-device-plugin|nvidia-device-plugin|gpu-feature-discovery|nvidia-gfd|"
                           r"dcgm")


def is_nvidia_component_image(image: str | None) -> bool:
    return bool(image and _NVIDIA_REGISTRY.search(image) and _GPU_MANAGEMENT.search(image))


def is_gpu_management(pod: PodSpec) -> bool:
    """A recognised NVIDIA GPU-management workload: by a container image from an NVIDIA
    registry, or (templated images) by the object's or a container's name."""
    if pod.gpu_management is None:
        pod.gpu_management = _gpu_management(pod)
    return pod.gpu_management


def _gpu_management(pod: PodSpec) -> bool:
    if any(is_nvidia_component_image(c.image) for c in pod.containers):
        return True
    names = [pod.name or ""] + [c.name or "" for c in pod.containers]
    return any(_GPU_MANAGEMENT_NAMES.search(n) for n in names)


def is_nvml_daemon(pod: PodSpec) -> bool:
    """An NVIDIA device plugin, GPU feature discovery or DCGM (exporter) DaemonSet."""
    if pod.kind != "DaemonSet":
        return False
    names = [pod.name or ""] + [c.name or "" for c in pod.containers]
    names += [c.image for c in pod.containers if is_nvidia_component_image(c.image)]
    return any(_NVML_DAEMONS.search(n) for n in names)


# ---------------------------------------------------------------- Kustomize patches

_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_KUSTOMIZE_LEVELS = 4  # patches sit beside their kustomization or a few folders below it
# the answer for a folder without a kustomization: one object, where the run remembers an
# answer per folder (`frozenset()` makes a new one of 216 bytes each time)
_NO_PATCHES: frozenset[str] = frozenset()


def is_kustomize_patch(doc: Document, ctx: Context | None = None) -> bool:
    """The file is listed under `patches` / `patchesStrategicMerge` of a kustomization
    in its folder or a folder above: a partial object that Kustomize merges into a base
    gpulint may not see. With the run's context, each folder is looked at once in the run
    (the manifests of a project share the folders above them)."""
    if "k8s.kustomize_patch" not in doc.cache:
        import os

        seen = ctx.cache.setdefault("k8s.kustomize_patch_paths", {}) if ctx is not None else None
        folder, target = os.path.dirname(doc.abspath), os.path.normpath(doc.abspath)
        found = False
        for _ in range(_KUSTOMIZE_LEVELS):
            if seen is None:
                paths = _patch_paths(folder)
            else:
                paths = seen.get(folder)
                if paths is None:
                    paths = seen[folder] = _patch_paths(folder)
            if target in paths:
                found = True
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        doc.cache["k8s.kustomize_patch"] = found
    return doc.cache["k8s.kustomize_patch"]


def _patch_paths(folder: str) -> frozenset[str]:
    """Absolute paths of the patch files the kustomization in `folder` names."""
    import os

    for name in _KUSTOMIZATION_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return _read_patch_paths(path, os.stat(path).st_mtime_ns)
    return _NO_PATCHES


@functools.lru_cache(maxsize=256)
def _read_patch_paths(path: str, _mtime: int) -> frozenset[str]:
    import os

    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return _NO_PATCHES
    if not isinstance(data, dict):
        return _NO_PATCHES
    names = []
    for key in ("patchesStrategicMerge", "patches"):
        items = data.get(key)
        for item in items if isinstance(items, list) else ():
            name = item.get("path") if isinstance(item, dict) else item
            if isinstance(name, str) and "\n" not in name:  # an inline patch is no file
                names.append(name)
    folder = os.path.dirname(path)
    return frozenset(os.path.normpath(os.path.join(folder, name)) for name in names)
