"""Kubernetes manifests (GL5xx): GPU resources, NVIDIA env, privileges, host paths,
runtime classes and GPU feature discovery selectors of every pod spec."""

from __future__ import annotations

import re

from gpulint.k8s import (
    Container,
    is_gpu_resource,
    PodSpec,
    env_vars,
    gpu_limits,
    gpu_requests,
    is_gpu_management,
    is_handler_name,
    is_kustomize_patch,
    GPU_OPERATOR_RUNTIME_CLASSES,
    is_nvml_daemon,
    object_kind,
    object_name,
    pod_specs,
    quantity,
    requests_gpus,
    runtime_classes,
    scalar_str,
)
from gpulint.model import Document, Edit, Fix, Node, Related, Span, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

# ---------------------------------------------------------------- text edits


def _entry_lines(doc: Document, entry: Node) -> tuple[int, int, int] | None:
    """(start, end, indent) of the whole lines of a one-line block-style `key: value`
    entry, or None when it shares a line with anything else (flow style, JSON, `- key:`)."""
    if entry.key_span is None or entry.span.end_line != entry.key_span.line or not entry.is_scalar:
        return None
    index = doc.index
    line_start = index.starts[entry.key_span.line - 1]
    key_start, _ = doc.index.offsets(entry.key_span)
    _, value_end = doc.index.offsets(entry.span)
    if doc.text[line_start:key_start].strip(" "):
        return None
    line_end = doc.text.find("\n", value_end)
    line_end = len(doc.text) if line_end < 0 else line_end
    rest = doc.text[value_end:line_end].strip()
    if rest and not rest.startswith("#"):
        return None
    return line_start, min(line_end + 1, len(doc.text)), key_start - line_start


def _entry_text(doc: Document, entry: Node, indent: int) -> str | None:
    """The entry's line, re-indented, ending with a newline."""
    lines = _entry_lines(doc, entry)
    if lines is None:
        return None
    start, end, old_indent = lines
    return " " * indent + doc.text[start + old_indent:end].rstrip("\n") + "\n"


def _insertion_point(doc: Document, mapping: Node | None) -> tuple[int, int] | None:
    """(offset, indent) of the line holding a block mapping's first entry: where a
    new first entry goes. None for flow mappings, JSON and `- key:` lines."""
    if mapping is None or not mapping.is_map or not mapping.value:
        return None
    first = next(iter(mapping.value.values())).key_span
    if first is None:
        return None
    line_start = doc.index.starts[first.line - 1]
    key_start, _ = doc.index.offsets(first)
    if doc.text[line_start:key_start].strip(" "):
        return None
    return line_start, key_start - line_start


def _source(doc: Document, node: Node) -> str:
    """A value as written in the file."""
    return doc.text[slice(*doc.index.offsets(node.span))]


def _replace(doc: Document, span: Span, text: str, description: str, safe: bool = True) -> Fix:
    start, end = doc.index.offsets(span)
    return Fix(description, (Edit(doc.abspath, start, end, text),), safe)


def _no_fix_in_patches(check_fn):
    """Findings in a Kustomize patch come without a fix: rewriting a partial object
    could contradict the base it is merged into."""
    import functools

    @functools.wraps(check_fn)
    def wrapper(doc: Document, ctx: Context):
        patch = is_kustomize_patch(doc)
        for found in check_fn(doc, ctx):
            if patch:
                found.fix = None
            yield found
    return wrapper


# ---------------------------------------------------------------- GPU resources


def _containers(doc: Document):
    for pod in pod_specs(doc):
        for container in pod.containers:
            yield pod, container


def _label(container: Container) -> str:
    name = f"`{container.name}`" if container.name else "(unnamed)"
    kind = {"containers": "container", "initContainers": "init container",
            "ephemeralContainers": "ephemeral container"}[container.section]
    return f"{kind} {name}"


@check("GL501", kinds=("kubernetes",))
def gpu_request_without_limit(doc: Document, ctx: Context):
    if is_kustomize_patch(doc):
        return  # the base it is merged into may hold the limit
    for _, container in _containers(doc):
        limits = gpu_limits(container)
        if doc.templated and _filled_by_template(container.node.get("resources", "limits")):
            continue
        for name, value in gpu_requests(container).items():
            if name in limits:
                continue
            yield finding(
                doc, "GL501", value,
                f"{_label(container)} requests `{name}` without a `limits` entry: the API server "
                f"rejects the pod (\"Limit must be set for non overcommitable resources\"); "
                f"extended resources such as GPUs are given in `limits`",
                fix=_move_to_limits(doc, container, value))


def _filled_by_template(node: Node | None) -> bool:
    """A key of a template whose content a template expression writes (`limits:` followed
    by `{{ toYaml .Values.limits | nindent 10 }}`): it reads as empty or as a placeholder."""
    return node is not None and node.is_scalar and scalar_str(node) is None


def _move_to_limits(doc: Document, container: Container, entry: Node) -> Fix | None:
    resources = container.node.get("resources")
    requests, limits = resources.get("requests"), resources.get("limits")
    lines = _entry_lines(doc, entry)
    if lines is None or requests.key_span is None:
        return None
    start, end, indent = lines
    description = "move the GPU request to limits"
    if limits is None and len(requests.value) == 1:
        return _replace(doc, requests.key_span, "limits", description)
    if limits is None:
        req_start = doc.index.starts[requests.key_span.line - 1]
        req_indent = requests.key_span.column - 1
        insert = " " * req_indent + "limits:\n" + _entry_text(doc, entry, indent)
        return Fix(description, (Edit(doc.abspath, req_start, req_start, insert),
                                 Edit(doc.abspath, start, end, "")))
    target = _insertion_point(doc, limits)
    if target is None:
        return None
    if len(requests.value) == 1:  # the whole `requests:` block goes
        req_start = doc.index.starts[requests.key_span.line - 1]
        if doc.text[req_start:doc.index.offsets(requests.key_span)[0]].strip(" "):
            return None
        start = req_start
    insert = _entry_text(doc, entry, target[1])
    return Fix(description, (Edit(doc.abspath, target[0], target[0], insert),
                             Edit(doc.abspath, start, end, "")))


@check("GL502", kinds=("kubernetes",))
@_no_fix_in_patches
def gpu_request_limit_differ(doc: Document, ctx: Context):
    for _, container in _containers(doc):
        limits = gpu_limits(container)
        for name, request in gpu_requests(container).items():
            limit = limits.get(name)
            if limit is None:
                continue
            wanted, asked = quantity(limit), quantity(request)
            if wanted is None or asked is None or wanted == asked:
                continue
            limit_text = _source(doc, limit)
            yield finding(
                doc, "GL502", request,
                f"{_label(container)} requests {request.str()} `{name}` but limits it to "
                f"{limit.str()}: extended resources cannot be overcommitted, so the API server "
                f"rejects the pod (\"must be equal to {name} limit of {limit.str()}\")",
                fix=_replace(doc, request.span, limit_text, "make the GPU request equal to the limit"))


_QUANTITY = lazy(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([a-zA-Z]*)$")
# multipliers, each read as a Decimal (decimal is imported only when a quantity is checked)
_SUFFIXES = {"": 1, "m": "0.001", "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
             "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
             "Pi": 2**50, "Ei": 2**60}
_SHARING = ("GPUs are not divided through quantities: share one with time-slicing or MPS "
            "replicas of the device plugin, partition it with MIG (`nvidia.com/mig-*`), "
            "or allocate it with DRA")


# Quantities the API server cannot parse are rejected with this message.
_NOT_A_QUANTITY = ("quantities must match the regular expression "
                   "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def _quantity_problem(name: str, node: Node) -> tuple[str, str] | None:
    """(what is wrong with a GPU quantity, what the API server then does), or None
    when it is a whole, non-negative count."""
    unparsable = "is not a quantity", f"rejects the pod (\"{_NOT_A_QUANTITY}\")"
    if node.tag == "null":
        return None  # decodes as an empty quantity, which is zero
    if node.tag == "bool" or not node.is_scalar:
        return unparsable
    text = scalar_str(node)
    if text is None:
        return None
    match = _QUANTITY.match(text.strip())
    if not match or match.group(2) not in _SUFFIXES:
        return unparsable
    from decimal import Decimal

    try:
        amount = Decimal(match.group(1)) * Decimal(_SUFFIXES[match.group(2)])
    except ArithmeticError:  # an exponent beyond any number the API server reads
        return unparsable
    if amount < 0:
        return "is negative", "rejects the pod (\"must be greater than or equal to 0\")"
    if amount != amount.to_integral_value():
        return (f"is {amount.normalize()} of a device, not a whole number",
                "rejects the pod (\"must be an integer\")")
    if match.group(2) not in ("", "m") or "e" in match.group(1).lower():
        # a whole count, so it is accepted: the suffix or exponent multiplies it
        count = int(amount) if amount.adjusted() < 19 else f"{amount:E}"
        return (f"asks for {count} devices", f"accepts it, but no node has that many: the pod "
                f"stays Pending with \"Insufficient {name}\"")
    return None


@check("GL503", kinds=("kubernetes",))
def gpu_quantity_invalid(doc: Document, ctx: Context):
    for _, container in _containers(doc):
        for section, entries in (("limits", gpu_limits(container)), ("requests", gpu_requests(container))):
            for name, value in entries.items():
                problem = _quantity_problem(name, value)
                if problem is None:
                    continue
                what, outcome = problem
                yield finding(
                    doc, "GL503", value.span,
                    f"`{name}: {_source(doc, value)}` in {_label(container)} {section} {what}: "
                    f"extended resources are counted in whole devices and the API server "
                    f"{outcome}. {_SHARING}")


# Spellings users try for the NVIDIA GPU resource; none is advertised by any node.
_GPU_SPELLING = lazy(r"^(nvidia(\.com|\.io)?/)?(nvidia[-_.]?)?gpus?$")
_MIG = lazy(r"^nvidia\.com/mig-(\d+c\.)?\d+g\.\d+gb([.+][a-z0-9.+-]+)?$")
_OBSOLETE = "alpha.kubernetes.io/nvidia-gpu"


def _resource_name_problem(name: str) -> tuple[str, str | None] | None:
    """(why the name is wrong, the name to use or None)."""
    lower = name.lower()
    if name == "nvidia.com/gpu" or _MIG.match(name):
        return None
    if lower == _OBSOLETE:
        return ("is the pre-device-plugin name, removed in Kubernetes 1.11; the NVIDIA device "
                "plugin advertises `nvidia.com/gpu`", "nvidia.com/gpu")
    if _GPU_SPELLING.match(lower):
        return "is not a resource any node advertises; the NVIDIA device plugin uses `nvidia.com/gpu`", \
            "nvidia.com/gpu"
    if lower.startswith("nvidia.com/mig-"):
        if _MIG.match(lower):
            return "has the wrong case: MIG resource names are lowercase", lower
        return ("is not a MIG resource name; the device plugin advertises "
                "`nvidia.com/mig-<G>g.<M>gb` (for example `nvidia.com/mig-1g.10gb`)", None)
    return None


@check("GL504", kinds=("kubernetes",))
@_no_fix_in_patches
def gpu_resource_name_unknown(doc: Document, ctx: Context):
    for _, container in _containers(doc):
        for section in ("limits", "requests"):
            entries = container.node.get("resources", section)
            for name, value in entries.items() if entries is not None else ():
                problem = _resource_name_problem(name)
                if problem is None or value.key_span is None:
                    continue
                why, better = problem
                # a bare `gpu` may have meant another vendor's GPU
                safe = name.lower().startswith("nvidia") or name.lower() == _OBSOLETE
                fix = _rename_key(doc, entries, value.key_span, name, better, safe) if better else None
                yield finding(doc, "GL504", value.key_span,
                              f"`{name}` in {_label(container)} {section} {why}: {_name_outcome(name)}",
                              fix=fix)


def _name_outcome(name: str) -> str:
    if "/" not in name:  # only Kubernetes' own resources go without a domain
        return (f"the API server rejects the pod (\"{name}\": \"must be a standard resource for "
                f"containers\")")
    return f"the API server accepts the pod and it stays Pending with \"Insufficient {name}\""


def _rename_key(doc: Document, mapping: Node | None, span: Span, old: str, new: str,
                safe: bool = True) -> Fix | None:
    """Rename the key `old` written at `span` to `new`; None when the mapping already
    has `new` (the rename would write a duplicate key) or the key text is unusual."""
    if mapping is not None and mapping.get(new) is not None:
        return None
    start, end = doc.index.offsets(span)
    key_text = doc.text[start:end]
    if key_text.count(old) != 1:
        return None
    return Fix(f"rename `{old}` to `{new}`", (Edit(doc.abspath, start, end, key_text.replace(old, new)),),
               safe=safe)


# ---------------------------------------------------------------- NVIDIA env, privileges, host paths

_NVIDIA_ENV = lazy(r"^NVIDIA_(VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_\w+|DISABLE_REQUIRE)$")
_OPT_OUT = ("void", "none", "")


@check("GL505", kinds=("kubernetes",))
def nvidia_env_in_pod(doc: Document, ctx: Context):
    for pod, container in _containers(doc):
        if is_gpu_management(pod):
            continue
        has_gpu = requests_gpus(container)
        for name, name_node, value_node in env_vars(container):
            if not _NVIDIA_ENV.match(name):
                continue
            value = scalar_str(value_node) if value_node is not None else None
            message, severity = _env_problem(name, value, has_gpu)
            if message:
                yield finding(doc, "GL505", name_node.span, f"{_label(container)}: {message}",
                              severity=severity)


def _env_problem(name: str, value: str | None, has_gpu: bool) -> tuple[str | None, str | None]:
    """The message and severity for one NVIDIA_* variable in a pod (None: fine)."""
    shown = f"`{name}={value}`" if value is not None else f"`{name}`"
    if name == "NVIDIA_VISIBLE_DEVICES":
        if value is not None and value.strip().lower() in _OPT_OUT:
            return None, None
        if has_gpu:
            return (f"{shown} next to a GPU limit competes with the devices the device plugin "
                    f"assigned: depending on the device list strategy the container gets the "
                    f"plugin's GPUs or the ones named here"), "warning"
        return (f"{shown} without a GPU limit selects GPUs behind the scheduler's back: the "
                f"container sees GPUs the device plugin gave to other pods (with CDI, as the "
                f"GPU Operator now defaults to, it gets none unless the pod also sets "
                f"`runtimeClassName: nvidia`); request `nvidia.com/gpu` in limits instead"), \
            "error" if value is not None else "warning"
    if name == "NVIDIA_DISABLE_REQUIRE":
        return (f"{shown} turns off the NVIDIA runtime's CUDA/driver compatibility check: an "
                f"image too new for the node's driver starts and then fails inside the "
                f"application (\"CUDA driver version is insufficient\")"), "warning"
    if has_gpu:
        return None, None  # capabilities and requirements of an allocated GPU are the pod's choice
    return (f"{shown} in a container without a GPU limit only matters when the NVIDIA runtime "
            f"exposes GPUs by environment, outside the device plugin's accounting; request "
            f"`nvidia.com/gpu` in limits instead"), "warning"


def _is_cuda_image(image: str | None) -> bool:
    if not image:
        return False
    from gpulint.knowledge.images import cuda_image

    return cuda_image(image) is not None


def _gpu_reason(container: Container) -> str | None:
    if requests_gpus(container):
        return "requests GPUs"
    if _is_cuda_image(container.image):
        return f"runs the CUDA image `{container.image}`"
    return None


@check("GL506", kinds=("kubernetes",))
def privileged_gpu(doc: Document, ctx: Context):
    for pod, container in _containers(doc):
        if is_gpu_management(pod):
            continue
        where = _privilege(container)
        reason = _gpu_reason(container) if where is not None else None
        if reason is None:
            continue
        setting = "privileged: true" if where.key_span else f"capabilities.add: {scalar_str(where)}"
        yield finding(
            doc, "GL506", where,
            f"{_label(container)} {reason} and is privileged (`{setting}`): it sees every GPU on "
            f"the node, not only those the device plugin assigned, so it can use or disturb "
            f"other pods' GPUs")


def _privilege(container: Container) -> Node | None:
    """The `privileged: true` or `SYS_ADMIN` capability node of a container."""
    context = container.node.get("securityContext")
    if context is None:
        return None
    privileged = context.get("privileged")
    if privileged is not None and privileged.value is True:
        return privileged
    added = context.get("capabilities", "add")
    for item in sequence(added):
        if (scalar_str(item) or "").upper() in ("SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"):
            return item
    return None


_HOST_GPU_PATH = lazy(
    r"^(/dev/nvidia[^/]*|/dev/dri(/.*)?|/run/nvidia/driver(/.*)?|/usr/local/nvidia(/.*)?"
    r"|.*/lib(nvidia|cuda)[^/]*|/usr/lib(64)?/(x86_64|aarch64)-linux-gnu/nvidia(/.*)?"
    r"|/usr/bin/nvidia-smi)/?$")


@check("GL507", kinds=("kubernetes",))
def hostpath_nvidia(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        if is_gpu_management(pod):
            continue
        volumes = pod.spec.get("volumes")
        for volume in sequence(volumes):
            path_node = volume.get("hostPath", "path")
            path = scalar_str(path_node)
            if path is None or not _HOST_GPU_PATH.match(path):
                continue
            yield finding(
                doc, "GL507", path_node.span,
                f"hostPath volume `{path}` mounts the node's GPU devices or driver into the pod: "
                f"without privileges the device cgroup still denies the devices, with privileges "
                f"it bypasses the device plugin, and a driver upgrade on the node breaks the pod "
                f"(library/kernel mismatch); {_device_plugin_advice(path)}")


def _device_plugin_advice(path: str) -> str:
    if path.startswith("/dev/dri"):  # render nodes of any vendor's GPU
        return ("request the GPU from its vendor's device plugin (`nvidia.com/gpu`, "
                "`gpu.intel.com/i915`, `amd.com/gpu`), which hands the pod its devices")
    return "request `nvidia.com/gpu` and let the NVIDIA runtime inject devices and libraries"


@check("GL508", kinds=("kubernetes",))
def gpu_in_init_container(doc: Document, ctx: Context):
    for _, container in _containers(doc):
        if container.section != "initContainers" or not requests_gpus(container):
            continue
        for name, value in gpu_limits(container).items():
            yield finding(
                doc, "GL508", value,
                f"{_label(container)} requests `{name}`: the pod then holds max(init, sum of app "
                f"containers) GPUs, and devices allocated to init containers have been stranded by "
                f"kubelet device-manager bugs (\"UnexpectedAdmissionError\"); do GPU work in the "
                f"app containers")


# ---------------------------------------------------------------- misplaced GPU quantities

# Keys users write for `limits` / `requests` that the API does not know.
_RESOURCE_KEYS = {"limit": "limits", "request": "requests", "Limits": "limits", "Requests": "requests",
                  "limitations": "limits", "limts": "limits", "requets": "requests"}


def misplaced_gpu_resources(container: Container) -> list[tuple[Node, str, str | None]]:
    """(the entry, where it is, the key it belongs under) of each `nvidia.com/*` quantity
    the API server does not read: under a misspelt `resources` key such as `limit`,
    directly under `resources`, or in `limits`/`requests` outside `resources`."""
    found = []
    resources = container.node.get("resources")
    if resources is not None and resources.is_map:
        for key, entry in resources.items():
            if key in ("limits", "requests", "claims"):
                continue
            if is_gpu_resource(key):
                found.append((entry, f"`resources.{key}`", None))
            elif entry.is_map and any(is_gpu_resource(name) for name in entry.value):
                found.append((entry, f"`resources.{key}`", _RESOURCE_KEYS.get(key)))
    for key in ("limits", "requests"):
        entry = container.node.get(key)
        if entry is not None and entry.is_map and any(is_gpu_resource(name) for name in entry.value):
            found.append((entry, f"`{key}` outside `resources`", None))
    return found


@check("GL515", kinds=("kubernetes",))
@_no_fix_in_patches
def gpu_resources_misplaced(doc: Document, ctx: Context):
    for _pod, container in _containers(doc):
        for entry, where, meant in misplaced_gpu_resources(container):
            hint = f"write `resources.{meant}`" if meant else "put it under `resources.limits`"
            effect = ("its GPUs still come from `resources.limits`" if gpu_limits(container)
                      else "the container requests no GPU")
            yield finding(
                doc, "GL515", entry,
                f"{_label(container)} names a GPU quantity in {where}, which is not a field there: kubectl's "
                f"default strict field validation rejects the object (`strict decoding error: unknown field`), "
                f"and where validation is off or lenient the API server drops it ({effect}); {hint}",
                fix=_rename_resource_key(doc, container, entry, meant))


def _rename_resource_key(doc: Document, container: Container, entry: Node, meant: str | None) -> Fix | None:
    """Rename a misspelt `resources` key when the right one is not there already."""
    if meant is None or entry.key_span is None or container.node.get("resources", meant) is not None:
        return None
    return _replace(doc, entry.key_span, meant, f"rename the key to `{meant}`")


# ---------------------------------------------------------------- runtime classes

@check("GL509", kinds=("kubernetes",))
@_no_fix_in_patches
def runtime_class_misplaced(doc: Document, ctx: Context):
    for where, entry, pods in _misplaced_runtime_classes(doc):
        yield finding(
            doc, "GL509", entry,
            f"`runtimeClassName` in {where} is not a field there: kubectl's default strict field "
            f"validation rejects the object (`strict decoding error: unknown field`), and where "
            f"validation is off or lenient the API server drops it and the pod runs on the node's "
            f"default runtime, usually without GPUs; it belongs in the pod spec",
            fix=_move_runtime_class(doc, pods, entry))


def _misplaced_runtime_classes(doc: Document) -> list[tuple[str, Node, list[PodSpec]]]:
    """(where, the entry, the pod specs it was meant for) of each `runtimeClassName`
    outside a pod spec. A workload's `spec` is on the way to each of its pod specs
    (a LeaderWorkerSet's leader and worker), so one entry may serve several."""
    found: dict[int, tuple[str, Node, list[PodSpec]]] = {}
    for pod in pod_specs(doc):
        places = [(f"the top level of the {pod.kind}", pod.obj)]
        places += [(f"the {pod.kind}'s `{_key_text(doc, node)}`", node) for node in pod.trail]
        if pod.metadata is not None:
            places.append(("metadata", pod.metadata))
        places += [(_label(c), c.node) for c in pod.containers]
        for where, mapping in places:
            entry = mapping.get("runtimeClassName")
            if entry is not None and entry.key_span is not None:
                found.setdefault(id(entry), (where, entry, []))[2].append(pod)
    return list(found.values())


def _key_text(doc: Document, node: Node) -> str:
    if node.key_span is None:
        return "item"
    return doc.text[slice(*doc.index.offsets(node.key_span))].strip("\"'")


def _move_runtime_class(doc: Document, pods: list[PodSpec], entry: Node) -> Fix | None:
    """Remove the entry and add it to each pod spec that lacks it; None when a pod spec
    names a different class (the user must choose) or the YAML is not block style."""
    lines = _entry_lines(doc, entry)
    if lines is None:
        return None
    edits = [Edit(doc.abspath, lines[0], lines[1], "")]
    for pod in pods:
        existing = pod.spec.get("runtimeClassName")
        if existing is not None:
            if scalar_str(existing) != scalar_str(entry):
                return None
            continue
        target = _insertion_point(doc, pod.spec)
        if target is None:
            return None
        edits.append(Edit(doc.abspath, target[0], target[0], _entry_text(doc, entry, target[1])))
    return Fix("move runtimeClassName to the pod spec", tuple(edits))


_OLD_NODE_API = ("node.k8s.io/v1beta1", "node.k8s.io/v1alpha1")


@check("GL510", kinds=("kubernetes",))
@_no_fix_in_patches
def runtime_class_invalid(doc: Document, ctx: Context):
    for obj in runtime_classes(doc):
        api = obj.get("apiVersion")
        version = scalar_str(api)
        if version in _OLD_NODE_API:
            # v1alpha1 kept the handler under spec.runtimeHandler: not a one-word change
            fix = _replace(doc, api.span, "node.k8s.io/v1", "use apiVersion node.k8s.io/v1") \
                if version.endswith("v1beta1") else None
            yield finding(
                doc, "GL510", api.span,
                f"RuntimeClass `{scalar_str(obj.get('metadata', 'name')) or '?'}` uses "
                f"`{version}`, no longer served since Kubernetes 1.25: `kubectl apply` fails with "
                f"\"no matches for kind \"RuntimeClass\" in version \"{version}\"\"; use "
                f"`node.k8s.io/v1`", fix=fix)
        if version == "node.k8s.io/v1alpha1":
            continue  # its handler lives elsewhere; the apiVersion is the problem to fix first
        handler = obj.get("handler")
        if handler is None:
            yield finding(doc, "GL510", obj.get("kind").span,
                          "RuntimeClass has no `handler`: the field is required and names the "
                          "containerd/CRI-O runtime (for example `nvidia`) that runs its pods")
            continue
        name = scalar_str(handler)
        if handler.is_scalar and name is None:
            continue  # templated
        if name is None or not is_handler_name(name):
            label = _handler_label(name)
            yield finding(
                doc, "GL510", handler.span,
                f"RuntimeClass handler `{_source(doc, handler)}` is not a lowercase DNS-1123 label (lowercase "
                f"letters, digits and `-`, at most 63 characters): the API server rejects the "
                f"object; " + (f"use `{label}` here and as the name of the containerd runtime table"
                               if label else "name the containerd runtime table accordingly (for "
                               "example `nvidia`)"))


def _handler_label(name: str | None) -> str | None:
    """The DNS-1123 label a handler such as `nvidia_cdi` or `Nvidia` was meant to be."""
    label = re.sub(r"[^a-z0-9-]+", "-", (name or "").lower()).strip("-")
    return label if label and is_handler_name(label) else None


# Renamed GPU feature discovery labels (the old ones are deprecated).
_GFD_RENAMED = {
    "nvidia.com/cuda.driver.major": "nvidia.com/cuda.driver-version.major",
    "nvidia.com/cuda.driver.minor": "nvidia.com/cuda.driver-version.minor",
    "nvidia.com/cuda.driver.rev": "nvidia.com/cuda.driver-version.revision",
    "nvidia.com/cuda.runtime.major": "nvidia.com/cuda.runtime-version.major",
    "nvidia.com/cuda.runtime.minor": "nvidia.com/cuda.runtime-version.minor",
}


def _selectors(doc: Document):
    """The nodeSelector mapping of every pod spec and RuntimeClass."""
    for pod in pod_specs(doc):
        yield pod.spec.get("nodeSelector")
    for obj in runtime_classes(doc):
        yield obj.get("scheduling", "nodeSelector")


def _affinity_keys(pod: PodSpec):
    """The `key` nodes of every node-affinity match expression of a pod."""
    affinity = pod.spec.get("affinity", "nodeAffinity")
    if affinity is None:
        return
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    terms = list(sequence(required))
    terms += [p.get("preference") for p in sequence(preferred)]
    for term in terms:
        expressions = term.get("matchExpressions") if term is not None else None
        for expr in sequence(expressions):
            key = expr.get("key")
            if key is not None and key.is_scalar:
                yield key


@check("GL511", kinds=("kubernetes",))
@_no_fix_in_patches
def gfd_selector_invalid(doc: Document, ctx: Context):
    for selector in _selectors(doc):
        for label, value in selector.items() if selector is not None else ():
            if value.tag in _JSON_TYPES or value.tag == "null" or not value.is_scalar:
                yield _non_string_selector(doc, label, value)
            if label in _GFD_RENAMED and value.key_span is not None:
                yield _deprecated_label(doc, selector, label, value.key_span)
    for pod in pod_specs(doc):
        for key in _affinity_keys(pod):
            label = scalar_str(key)
            if label in _GFD_RENAMED:
                yield _deprecated_label(doc, None, label, key.span)


# What JSON calls each YAML type: the API server decodes the manifest as JSON.
_JSON_TYPES = {"int": "number", "float": "number", "bool": "bool"}


def _non_string_selector(doc: Document, label: str, value: Node):
    text = _source(doc, value)
    if value.tag == "null":
        return finding(
            doc, "GL511", value.key_span or value.span,
            f"nodeSelector `{label}` has no value: it decodes as the empty string, so the pod "
            f"fits only nodes whose `{label}` label is empty and stays Pending (\"didn't match "
            f"Pod's node affinity/selector\"); give the value in quotes", severity="error")
    json_type = _JSON_TYPES.get(value.tag) or ("object" if value.is_map else "array")
    fix = _replace(doc, value.span, f'"{text}"', "quote the label value") if value.is_scalar else None
    return finding(
        doc, "GL511", value.span,
        f"nodeSelector `{label}: {text}` is not a string but a JSON {json_type}, and node "
        f"selectors map label names to strings: the API server rejects the object (\"cannot "
        f"unmarshal {json_type} into Go struct field ... of type string\"); "
        f"{'quote it' if fix else 'give one string value'}", severity="error", fix=fix)


def _deprecated_label(doc: Document, selector: Node | None, label: str, span: Span):
    new = _GFD_RENAMED[label]
    # unsafe: nodes labelled by an older GPU feature discovery only carry the old name
    fix = _rename_key(doc, selector, span, label, new, safe=False)
    also = selector is not None and selector.get(new) is not None
    advice = (f"the selector already requires `{new}`, so drop the old label" if also
              else f"select on `{new}` (keep both only while old nodes remain)")
    return finding(
        doc, "GL511", span,
        f"`{label}` is a deprecated GPU feature discovery label; current releases publish "
        f"`{new}`, and a selector on the old name stops matching once it is dropped (the pod "
        f"stays Pending); {advice}", severity="warning", fix=fix)


@check("GL512", kinds=("kubernetes",))
def devel_image_in_pod(doc: Document, ctx: Context):
    from gpulint.knowledge.images import cuda_image

    for _, container in _containers(doc):
        image = cuda_image(container.image) if container.image else None
        # NGC framework images are built on devel and have no runtime flavour to move to
        if image is None or not image.is_devel or image.family != "nvidia-cuda":
            continue
        yield finding(
            doc, "GL512", container.image_node.span,
            f"{_label(container)} runs the CUDA devel image `{container.image}`: it carries the "
            f"compiler, headers and static libraries (gigabytes every new node pulls before the "
            f"pod starts) that running an application does not need; use the `runtime` (or "
            f"`cudnn-runtime`) flavour of the same tag unless the pod really compiles CUDA code")


@check("GL513", kinds=("kubernetes",))
def cuda_image_without_gpu(doc: Document, ctx: Context):
    nvidia_classes = _nvidia_runtime_classes(ctx)
    if is_kustomize_patch(doc):
        return  # the base it is merged into may hold the GPU limit
    for pod, container in _containers(doc):
        runtime_class = scalar_str(pod.spec.get("runtimeClassName"))
        if is_gpu_management(pod):
            continue
        if requests_gpus(container) or not _is_cuda_image(container.image) or _opted_out(container):
            continue
        if gpu_requests(container) or ("GL505" in ctx.enabled and _sets_visible_devices(container)) \
                or misplaced_gpu_resources(container):
            continue  # GL501/GL502 (the pod is rejected), GL505 or GL515 report the missing limit
        if runtime_class is None and gpu_limits(container):
            yield _zero_gpus_default_runtime(doc, ctx, container)
            continue
        if runtime_class not in nvidia_classes:
            continue
        limit = "with a GPU limit of 0" if gpu_limits(container) else "without a GPU limit"
        yield finding(
            doc, "GL513", container.image_node.span,
            f"{_label(container)} runs the CUDA image `{container.image}` {limit} in a pod with "
            f"`runtimeClassName: {runtime_class}` (an NVIDIA runtime): the image sets NVIDIA_VISIBLE_DEVICES=all, "
            f"so the runtime exposes every GPU of the node to it, unaccounted by the scheduler; "
            f"request `nvidia.com/gpu` in limits, or set NVIDIA_VISIBLE_DEVICES=void if it must "
            f"not use GPUs")


def _zero_gpus_default_runtime(doc: Document, ctx: Context, container: Container):
    """A CUDA image with an explicit GPU limit of 0 and no runtime class: what it gets
    depends on the node's default runtime."""
    from gpulint.nodeconfig import node_configs

    name, value = next(iter(gpu_limits(container).items()))
    defaults = [config.runtimes.get(config.default_runtime) for config in node_configs(ctx)]
    nvidia_default = any(entry is not None and entry.is_nvidia for entry in defaults)
    where = ("the linted node configuration makes the NVIDIA runtime the default, so it gets every GPU of the "
             "node" if nvidia_default else
             "it gets none where runc is the node's default runtime, and every GPU of the node where the NVIDIA "
             "runtime is the default (as the GPU Operator configures containerd)")
    return finding(
        doc, "GL513", value.span,
        f"{_label(container)} runs the CUDA image `{container.image}` with `{name}: 0`: {where}, since the image "
        f"sets NVIDIA_VISIBLE_DEVICES=all and the device plugin allocates nothing to override it (unless the "
        f"container toolkit ignores that variable in unprivileged containers); request the "
        f"GPUs it needs, or set NVIDIA_VISIBLE_DEVICES=void if it must not use GPUs",
        severity="warning" if nvidia_default else "info")


def _nvidia_runtime_classes(ctx: Context) -> set[str]:
    """Names of the RuntimeClasses whose pods run under the NVIDIA runtime: linted ones
    whose handler is an NVIDIA runtime (by its name, or by the binary a linted node
    config gives it), and the GPU Operator's unless the linted files define them."""
    from gpulint.nodeconfig import is_nvidia_handler, node_configs

    if "k8s.nvidia_runtime_classes" in ctx.cache:
        return ctx.cache["k8s.nvidia_runtime_classes"]
    nvidia_runtimes = {name for config in node_configs(ctx)
                       for name, entry in config.runtimes.items() if entry.is_nvidia}
    handlers = {object_name(obj): scalar_str(obj.get("handler"))
                for doc in ctx.of_kind("kubernetes") for obj in runtime_classes(doc)}
    names = {n for n in GPU_OPERATOR_RUNTIME_CLASSES if n not in handlers}
    names |= {n for n, h in handlers.items() if n and h and (h in nvidia_runtimes or is_nvidia_handler(h, None))}
    ctx.cache["k8s.nvidia_runtime_classes"] = names
    return names


def _sets_visible_devices(container: Container) -> bool:
    return any(name == "NVIDIA_VISIBLE_DEVICES" for name, _, _ in env_vars(container))


def _opted_out(container: Container) -> bool:
    for name, _, value in env_vars(container):
        if name == "NVIDIA_VISIBLE_DEVICES" and (scalar_str(value) or "").strip().lower() in _OPT_OUT:
            return True
    return False


# ---------------------------------------------------------------- GPU node taints


def _taint_lists(obj: Node):
    """Taint lists declared by node objects and node-provisioning configs."""
    kind = object_kind(obj)
    if kind == "Node":
        yield obj.get("spec", "taints")
    elif kind == "NodePool":  # Karpenter
        yield obj.get("spec", "template", "spec", "taints")
    elif kind in ("InitConfiguration", "JoinConfiguration"):  # kubeadm
        yield obj.get("nodeRegistration", "taints")
    elif kind == "ClusterConfig":  # eksctl
        for section in ("nodeGroups", "managedNodeGroups"):
            groups = obj.get(section)
            for group in sequence(groups):
                yield group.get("taints")


def _taints(node: Node | None):
    """(key, value, effect, node) of each taint: list form, or eksctl's `key: value:Effect` map."""
    if node is None:
        return
    if node.is_map:
        for key, entry in node.items():
            value, _, effect = (scalar_str(entry) or "").rpartition(":")
            yield key, value, effect, entry
    for item in sequence(node):
        yield (scalar_str(item.get("key")) or "", scalar_str(item.get("value")) or "",
               scalar_str(item.get("effect")) or "", item)


def _repels(effect: str) -> bool:
    return effect in ("NoSchedule", "NoExecute")


def _is_gpu_taint(key: str, value: str, effect: str) -> bool:
    text = f"{key}={value}".lower()
    return _repels(effect) and ("gpu" in text or "nvidia" in text)


def _gpu_pools(ctx: Context) -> list[list[tuple]]:
    """The repelling taints, as (key, value, effect, where declared), of each node pool
    that carries at least one GPU taint (a pod must tolerate all of them to land on
    that pool), and of the GPU nodes the configuration describes (`fleet.taints`)."""
    return ctx.memo("k8s.gpu_pools", lambda: _find_gpu_pools(ctx))


def _find_gpu_pools(ctx: Context) -> list[list[tuple]]:
    pools = []
    for doc in ctx.of_kind("kubernetes"):
        for obj in doc.tree or ():
            for taint_list in _taint_lists(obj):
                taints = [(k, v, e, related(doc, n, f"taint `{k}` declared here"))
                          for k, v, e, n in _taints(taint_list) if _repels(e)]
                if any(_is_gpu_taint(*t[:3]) for t in taints):
                    pools.append(taints)
    configured = [t for t in _config_taints(ctx.settings) if _repels(t[2])]
    return pools + [configured] if configured else pools


def _config_taints(settings):
    """(key, value, effect, where) of each `key[=value]:Effect` in the configuration's
    `fleet.taints`, pointing at the line of the configuration that names it."""
    from gpulint.discover import display_path

    written = sequence(settings.tree.get("fleet", "taints")) if settings.tree is not None else ()
    for text, node in zip((settings.fleet or {}).get("taints", ()), written):
        taint, _, effect = text.rpartition(":")
        key, _, value = taint.partition("=")
        yield key, value, effect, Related(display_path(settings.path), node.span.line,
                                          node.span.column, f"taint `{key}` of the fleet's GPU nodes")


def _tolerates(tolerations: Node | None, key: str, value: str, effect: str) -> bool:
    for item in sequence(tolerations):
        t_effect = scalar_str(item.get("effect")) or ""
        if t_effect and t_effect != effect:
            continue
        t_key = scalar_str(item.get("key")) or ""
        if (scalar_str(item.get("operator")) or "Equal") == "Exists":
            if not t_key or t_key == key:
                return True
        elif t_key == key and (scalar_str(item.get("value")) or "") == value:
            return True
    return False


@check("GL514", kinds=("kubernetes",))
def gpu_taint_not_tolerated(doc: Document, ctx: Context):
    for pod in pod_specs(doc):
        daemon = is_nvml_daemon(pod)
        if not daemon and not any(requests_gpus(c) for c in pod.containers):
            continue
        tolerations = pod.spec.get("tolerations")
        if tolerations is None and (doc.templated or is_kustomize_patch(doc)):
            continue  # charts template their tolerations in; a patch's base may hold them
        pools = _gpu_pools(ctx)
        if not pools:
            return
        untolerated = [[t for t in pool if not _tolerates(tolerations, *t[:3])] for pool in pools]
        # a node daemon must reach every GPU pool; a workload needs one it can land on
        blocked = any(untolerated) if daemon else all(untolerated)
        if not blocked:
            continue
        yield _untolerated_finding(doc, pod, daemon, [t for pool in untolerated for t in pool])


def _untolerated_finding(doc: Document, pod: PodSpec, daemon: bool, missing: list[tuple]):
    tolerations = pod.spec.get("tolerations")
    names = ", ".join(dict.fromkeys(f"`{k}={v}:{e}`" if v else f"`{k}:{e}`" for k, v, e, _ in missing))
    who = ("this device plugin / feature discovery / DCGM DaemonSet: without it the GPU "
           "nodes never advertise `nvidia.com/gpu`" if daemon else
           "this GPU workload on any GPU node pool: it stays Pending with \"node(s) had "
           "untolerated taint\"")
    key, _, effect, _ = missing[0]
    return finding(
        doc, "GL514", tolerations if tolerations is not None else pod.spec,
        f"GPU nodes are tainted {names}, but no toleration matches for {who}; add "
        f"`{{key: {key}, operator: Exists, effect: {effect}}}` to the pod's tolerations",
        severity="error" if daemon else "warning", related=[t[3] for t in missing])
