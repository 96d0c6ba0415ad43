"""Kubernetes manifest rules (GL501-GL508, GL515, GL519, GL920, GL921): GPU requests and limits,
resource types mixed in one container, NVIDIA variables and driver capabilities, privileges and
host paths, GPU quantities in the wrong place.
"""

from __future__ import annotations

from gpulint.common.capabilities import (
    effective_capabilities,
    video_without_capability,
    without_video_message,
)
from gpulint.common.containers import visible_devices_span, visible_devices_unreadable
from gpulint.kinds.kubernetes.facts import (
    LEGACY_GPU_RESOURCE,
    Container,
    device_plugin_resources,
    env_vars,
    gpu_limits,
    is_device_plugin_resource,
    is_gpu_management,
    is_gpu_resource,
    is_kustomize_patch,
    pod_specs,
    quantity,
    requests_gpus,
    scalar_str,
)
from gpulint.kinds.kubernetes.support import (
    OPT_OUT,
    container_label,
    containers_of,
    entry_lines,
    entry_text,
    insertion_point,
    is_cuda_image,
    misplaced_gpu_resources,
    no_fix_in_patches,
    privilege,
    rename_key,
    replace_edit,
    source_text,
)
from gpulint.model import Document, Edit, Fix, Node, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

# ---------------------------------------------------------------- what kubectl reads


@check("GL001", kinds=("kubernetes",))
def duplicate_keys(doc: Document, ctx: Context):
    """A key written twice in one mapping. `kubectl apply -f` (sigs.k8s.io/yaml, go-yaml v2
    without strict mode) keeps the later value and drops the first without a word
    (kubernetes/kubernetes#99286, #125885); kustomize (`kubectl apply -k`) decodes with
    go-yaml v3 and refuses the file with go-yaml's message. Hence a warning."""
    if doc.templated:
        return  # template expressions set aside may read as equal keys
    for dup in doc.cache.get("yaml.duplicates", ()):
        yield finding(
            doc, "GL001", dup.second,
            f"mapping key \"{dup.key}\" already defined at line {dup.first.line}: `kubectl apply -f` "
            f"keeps this later value and silently drops the first one; kustomize (`kubectl apply -k`) "
            f"refuses the file (\"line {dup.second.line}: mapping key \"{dup.key}\" already defined at "
            f"line {dup.first.line}\")", severity="warning",
            related=[related(doc, dup.first, f"`{dup.key}` first defined here")])


# ---------------------------------------------------------------- GPU resources


@check("GL501", kinds=("kubernetes",))
def gpu_request_without_limit(doc: Document, ctx: Context):
    if is_kustomize_patch(doc, ctx):
        return  # the base it is merged into may hold the limit
    for _, container in containers_of(doc):
        limits = device_plugin_resources(container, "limits")
        if doc.templated and _filled_by_template(container.node.get("resources", "limits")):
            continue
        # only extended resources: the legacy GPU resource was overcommittable, requested alone it passes
        for name, value in device_plugin_resources(container, "requests").items():
            if name in limits:
                continue
            yield finding(
                doc, "GL501", value,
                f"{container_label(container)} requests `{name}` without a `limits` entry: the API server "
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
    lines = entry_lines(doc, entry)
    if lines is None or requests.key_span is None:
        return None
    start, end, indent = lines
    description = "move the GPU request to limits"
    if limits is None and len(requests.value) == 1:
        return replace_edit(doc, requests.key_span, "limits", description)
    if limits is None:
        req_start = doc.index.starts[requests.key_span.line - 1]
        req_indent = requests.key_span.column - 1
        insert = " " * req_indent + "limits:\n" + entry_text(doc, entry, indent)
        return Fix(description, (Edit(doc.abspath, req_start, req_start, insert),
                                 Edit(doc.abspath, start, end, "")))
    target = insertion_point(doc, limits)
    if target is None:
        return None
    if len(requests.value) == 1:  # the whole `requests:` block goes
        req_start = doc.index.starts[requests.key_span.line - 1]
        if doc.text[req_start:doc.index.offsets(requests.key_span)[0]].strip(" "):
            return None
        start = req_start
    insert = entry_text(doc, entry, target[1])
    return Fix(description, (Edit(doc.abspath, target[0], target[0], insert),
                             Edit(doc.abspath, start, end, "")))


@check("GL502", kinds=("kubernetes",))
@no_fix_in_patches
def gpu_request_limit_differ(doc: Document, ctx: Context):
    for _, container in containers_of(doc):
        limits = device_plugin_resources(container, "limits")
        # only extended resources: the legacy GPU resource was overcommittable, a smaller request passes
        for name, request in device_plugin_resources(container, "requests").items():
            limit = limits.get(name)
            if limit is None:
                continue
            wanted, asked = quantity(limit), quantity(request)
            if wanted is None or asked is None or wanted == asked:
                continue
            limit_text = source_text(doc, limit)
            yield finding(
                doc, "GL502", request,
                f"{container_label(container)} requests {request.str()} `{name}` but limits it to "
                f"{limit.str()}: extended resources cannot be overcommitted, so the API server "
                f"rejects the pod (\"must be equal to {name} limit of {limit.str()}\")",
                fix=replace_edit(doc, request.span, limit_text, "make the GPU request equal to the limit"))


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
    for _, container in containers_of(doc):
        for section in ("limits", "requests"):
            # only extended resources are bound to whole counts; the legacy GPU name is GL504's
            for name, value in device_plugin_resources(container, section).items():
                problem = _quantity_problem(name, value)
                if problem is None:
                    continue
                what, outcome = problem
                yield finding(
                    doc, "GL503", value.span,
                    f"`{name}: {source_text(doc, value)}` in {container_label(container)} {section} {what}: "
                    f"extended resources are counted in whole devices and the API server "
                    f"{outcome}" + (f". {_SHARING}" if is_gpu_resource(name) else ""))


# Spellings users try for the NVIDIA GPU resource; none is advertised by any node.
_GPU_SPELLING = lazy(r"^(nvidia(\.com|\.io)?/)?(nvidia[-_.]?)?gpus?$")
_MIG = lazy(r"^nvidia\.com/mig-(\d+c\.)?\d+g\.\d+gb([.+][a-z0-9.+-]+)?$")


def _resource_name_problem(name: str) -> tuple[str, str | None] | None:
    """(why the name is wrong, the name to use or None)."""
    lower = name.lower()
    if name == "nvidia.com/gpu" or _MIG.match(name):
        return None
    if lower == LEGACY_GPU_RESOURCE:
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
@no_fix_in_patches
def gpu_resource_name_unknown(doc: Document, ctx: Context):
    for _, container in containers_of(doc):
        for section in ("limits", "requests"):
            entries = container.node.get("resources", section)
            for name, value in entries.items() if entries is not None else ():
                problem = _resource_name_problem(name)
                if problem is None or value.key_span is None:
                    continue
                why, better = problem
                # a bare `gpu` may have meant another vendor's GPU
                safe = name.lower().startswith("nvidia") or name.lower() == LEGACY_GPU_RESOURCE
                fix = rename_key(doc, entries, value.key_span, name, better, safe) if better else None
                unlike = _unlike_limit(doc, container, name, value) if section == "requests" \
                    and name.lower() == LEGACY_GPU_RESOURCE else None
                if unlike:
                    # the old name could be overcommitted; `nvidia.com/gpu` cannot (GL501, GL502)
                    fix, why = None, f"{why}, {unlike}"
                yield finding(doc, "GL504", value.key_span,
                              f"`{name}` in {container_label(container)} {section} {why}: {_name_outcome(name)}",
                              fix=fix)


def _unlike_limit(doc: Document, container: Container, name: str, request: Node) -> str | None:
    """What renaming a request of the legacy resource would miss: `nvidia.com/gpu` must
    be limited, and requested as much as it is limited (None: the limit matches)."""
    limit = container.node.get("resources", "limits", name)
    if limit is None:
        return "which goes in `limits` (requested alone, the pod is rejected)"
    if not limit.is_scalar or source_text(doc, limit) != source_text(doc, request):
        return "whose request must equal its limit (or be left out)"
    return None


def _name_outcome(name: str) -> str:
    if "/" not in name:  # only Kubernetes' own resources go without a domain
        return (f"the API server rejects the pod (\"{name}\": \"must be a standard resource for "
                f"containers\")")
    return f"the API server accepts the pod and it stays Pending with \"Insufficient {name}\""


# The resources the NVIDIA GPU device plugin serves with one device list each: a full GPU
# (`nvidia.com/gpu`) and every MIG profile of the mixed strategy.
_PLUGIN_GPU = "nvidia.com/gpu"


def _device_lists(container: Container) -> list[tuple[str, Node]]:
    """(name, entry) of each GPU device plugin resource the container asks for at least
    one of, in file order (limits, then requests the limits lack)."""
    found: dict[str, Node] = {}
    for section in ("limits", "requests"):
        for name, value in device_plugin_resources(container, section).items():
            if name in found or (name != _PLUGIN_GPU and not _MIG.match(name)):
                continue
            amount = quantity(value)
            if value.tag == "null" or (amount is not None and amount <= 0):
                continue  # asks for none of it
            found[name] = value
    return list(found.items())


@check("GL519", kinds=("kubernetes",))
def gpu_resource_types_mixed(doc: Document, ctx: Context):
    for _, container in containers_of(doc):
        asked = _device_lists(container)
        if len(asked) < 2 or not any(_MIG.match(name) for name, _ in asked):
            continue
        (first, first_node), second_node = asked[0], asked[1][1]
        if second_node.key_span is None:
            continue
        names = ", ".join(f"`{name}`" for name, _ in asked[1:])
        yield finding(
            doc, "GL519", second_node.key_span,
            f"{container_label(container)} asks for {names} besides `{first}`: the device plugin "
            f"allocates each resource on its own and, with its default device list strategy "
            f"(envvar), answers each with its own NVIDIA_VISIBLE_DEVICES; kubelet keeps only the "
            f"first one it merges (\"Environment variable has conflicting setting\"), so the "
            f"container sees one resource's devices while the others stay allocated to it, unused "
            f"(k8s-device-plugin#728), and a CUDA process enumerates one MIG device at most anyway; "
            f"ask for one GPU resource type per container, or give each type a container of its own",
            related=[related(doc, first_node.key_span or first_node, f"`{first}` asked for here")])


# ---------------------------------------------------------------- NVIDIA env, privileges, host paths

_NVIDIA_ENV = lazy(r"^NVIDIA_(VISIBLE_DEVICES|DRIVER_CAPABILITIES|REQUIRE_\w+|DISABLE_REQUIRE)$")


@check("GL505", kinds=("kubernetes",))
def nvidia_env_in_pod(doc: Document, ctx: Context):
    for pod, container in containers_of(doc):
        if is_gpu_management(pod):
            continue
        has_gpu = requests_gpus(container)
        for name, name_node, value_node in env_vars(container):
            if not _NVIDIA_ENV.match(name):
                continue
            value = scalar_str(value_node) if value_node is not None else None
            message, severity = _env_problem(name, value, has_gpu)
            if message:
                yield finding(doc, "GL505", name_node.span, f"{container_label(container)}: {message}",
                              severity=severity)


def _env_problem(name: str, value: str | None, has_gpu: bool) -> tuple[str | None, str | None]:
    """The message and severity for one NVIDIA_* variable in a pod (None: fine)."""
    shown = f"`{name}={value}`" if value is not None else f"`{name}`"
    if name == "NVIDIA_VISIBLE_DEVICES":
        if value is not None and value.strip().lower() in OPT_OUT:
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


def _gpu_reason(container: Container) -> str | None:
    if requests_gpus(container):
        return "requests GPUs"
    if is_cuda_image(container.image):
        return f"runs the CUDA image `{container.image}`"
    return None


@check("GL506", kinds=("kubernetes",))
def privileged_gpu(doc: Document, ctx: Context):
    for pod, container in containers_of(doc):
        if is_gpu_management(pod):
            continue
        where = privilege(container)
        reason = _gpu_reason(container) if where is not None else None
        if reason is None:
            continue
        setting = "privileged: true" if where.key_span else f"capabilities.add: {scalar_str(where)}"
        yield finding(
            doc, "GL506", where,
            f"{container_label(container)} {reason} and is privileged (`{setting}`): it sees every GPU on "
            f"the node, not only those the device plugin assigned, so it can use or disturb "
            f"other pods' GPUs")


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
    for _, container in containers_of(doc):
        if container.section != "initContainers" or not requests_gpus(container):
            continue
        for name, value in gpu_limits(container).items():
            if not is_device_plugin_resource(name):
                continue  # the device manager's allocation; the legacy name is GL504's
            yield finding(
                doc, "GL508", value,
                f"{container_label(container)} requests `{name}`: the pod then holds max(init, sum of app "
                f"containers) GPUs, and devices allocated to init containers have been stranded by "
                f"kubelet device-manager bugs (\"UnexpectedAdmissionError\"); do GPU work in the "
                f"app containers")


# ---------------------------------------------------------------- misplaced GPU quantities

@check("GL515", kinds=("kubernetes",))
@no_fix_in_patches
def gpu_resources_misplaced(doc: Document, ctx: Context):
    for _pod, container in containers_of(doc):
        for entry, where, meant in misplaced_gpu_resources(container):
            hint = f"write `resources.{meant}`" if meant else "put it under `resources.limits`"
            effect = ("its GPUs still come from `resources.limits`" if gpu_limits(container)
                      else "the container requests no GPU")
            yield finding(
                doc, "GL515", entry,
                f"{container_label(container)} names a GPU quantity in {where}, which is not a field there: kubectl's "
                f"default strict field validation rejects the object (`strict decoding error: unknown field`), "
                f"and where validation is off or lenient the API server drops it ({effect}); {hint}",
                fix=_rename_resource_key(doc, container, entry, meant))


def _rename_resource_key(doc: Document, container: Container, entry: Node, meant: str | None) -> Fix | None:
    """Rename a misspelt `resources` key when the right one is not there already."""
    if meant is None or entry.key_span is None or container.node.get("resources", meant) is not None:
        return None
    return replace_edit(doc, entry.key_span, meant, f"rename the key to `{meant}`")




# ---------------------------------------------------------------- GL920 device list values


@check("GL920", kinds=("kubernetes",))
def visible_devices_unreadable_value(doc: Document, ctx: Context):
    for _pod, container in containers_of(doc):
        for name, _name_node, value_node in env_vars(container):
            value = scalar_str(value_node) if value_node is not None else None
            # `$(VAR)` is expanded by the kubelet from the container's other variables
            problem = visible_devices_unreadable(name, value) if value and "$(" not in value else None
            if problem is not None:
                severity, message, start, end = problem
                yield finding(doc, "GL920", visible_devices_span(doc, value_node.span, value, start, end),
                              f"{container_label(container)}: {message}", severity=severity)


# ---------------------------------------------------------------- GL921 video without `video`


@check("GL921", kinds=("kubernetes",))
def video_capability_missing(doc: Document, ctx: Context):
    for pod, container in containers_of(doc):
        if not requests_gpus(container):
            continue
        commands = [node for node in (container.node.get("command"), container.node.get("args")) if node is not None]
        found = video_without_capability((str(part.value) for node in commands for part in sequence(node)),
                                         lambda: _capabilities_of(container))
        if found is None:
            continue
        used, effective, where = found
        fix = (f"set `NVIDIA_DRIVER_CAPABILITIES` to `{effective.written},video`" if effective.source == "environment"
               else "add `NVIDIA_DRIVER_CAPABILITIES=compute,utility,video` to its `env`")
        yield finding(doc, "GL921", where.span,
                      without_video_message(container_label(container), used, effective, fix),
                      related=[related(doc, commands[-1].span, "the command")])


def _capabilities_of(container: Container):
    """(the capabilities a GPU container runs with, the node that decides them)."""
    for name, _, value in reversed(env_vars(container)):
        if name == "NVIDIA_DRIVER_CAPABILITIES":
            text = scalar_str(value)
            effective = effective_capabilities((), text, container.image) if text is not None else None
            return (effective, value) if effective is not None else None
    if container.node.get("envFrom") is not None or container.image is None:
        return None  # a ConfigMap or Secret may set them
    effective = effective_capabilities((), None, container.image)
    return (effective, container.image_node) if effective is not None else None
