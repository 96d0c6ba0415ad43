"""Where a GPU pod runs (GL509-GL514): its RuntimeClass and handler, the image against the
runtime, and the taints of GPU node pools.
"""

from __future__ import annotations

import re

from gpulint.kinds.kubernetes.facts import (
    GPU_OPERATOR_RUNTIME_CLASSES,
    Container,
    PodSpec,
    device_plugin_resources,
    env_vars,
    gpu_limits,
    is_gpu_management,
    is_handler_name,
    is_kustomize_patch,
    is_nvml_daemon,
    object_kind,
    object_name,
    pod_specs,
    quantity,
    requests_gpus,
    runtime_classes,
    scalar_str,
)
from gpulint.kinds.kubernetes.support import (
    OPT_OUT,
    container_cuda_image,
    container_label,
    containers_of,
    entry_lines,
    entry_text,
    insertion_point,
    is_cuda_image,
    misplaced_gpu_resources,
    no_fix_in_patches,
    rename_key,
    replace_edit,
    source_text,
)
from gpulint.knowledge.runtimes import is_nvidia_handler
from gpulint.model import Document, Edit, Fix, Node, Related, Span, sequence
from gpulint.paths import display_path
from gpulint.registry import Context, check, finding, related

# ---------------------------------------------------------------- runtime classes

@check("GL509", kinds=("kubernetes",))
@no_fix_in_patches
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
        # (what the place is, the place): where it is, in words, only for an entry found
        places: list[tuple[object, Node]] = [("top", pod.obj)]
        places += [(node, node) for node in pod.trail]
        if pod.metadata is not None:
            places.append(("metadata", pod.metadata))
        places += [(c, c.node) for c in pod.containers]
        for what, mapping in places:
            entry = mapping.get("runtimeClassName")
            if entry is not None and entry.key_span is not None:
                if id(entry) not in found:
                    found[id(entry)] = (_place_text(doc, pod, what), entry, [])
                found[id(entry)][2].append(pod)
    return list(found.values())


def _place_text(doc: Document, pod: PodSpec, what) -> str:
    if what == "top":
        return f"the top level of the {pod.kind}"
    if what == "metadata":
        return "metadata"
    if isinstance(what, Node):  # a mapping on the way to the pod spec
        return f"the {pod.kind}'s `{_key_text(doc, what)}`"
    return container_label(what)


def _key_text(doc: Document, node: Node) -> str:
    if node.key_span is None:
        return "item"
    return doc.text[slice(*doc.index.offsets(node.key_span))].strip("\"'")


def _move_runtime_class(doc: Document, pods: list[PodSpec], entry: Node) -> Fix | None:
    """Remove the entry and add it to each pod spec that lacks it; None when a pod spec
    names a different class (the user must choose) or the YAML is not block style."""
    lines = entry_lines(doc, entry)
    if lines is None:
        return None
    edits = [Edit(doc.abspath, lines[0], lines[1], "")]
    for pod in pods:
        existing = pod.spec.get("runtimeClassName")
        if existing is not None:
            if scalar_str(existing) != scalar_str(entry):
                return None
            continue
        target = insertion_point(doc, pod.spec)
        if target is None:
            return None
        edits.append(Edit(doc.abspath, target[0], target[0], entry_text(doc, entry, target[1])))
    return Fix("move runtimeClassName to the pod spec", tuple(edits))


_OLD_NODE_API = ("node.k8s.io/v1beta1", "node.k8s.io/v1alpha1")


@check("GL510", kinds=("kubernetes",))
@no_fix_in_patches
def runtime_class_invalid(doc: Document, ctx: Context):
    for obj in runtime_classes(doc):
        api = obj.get("apiVersion")
        version = scalar_str(api)
        if version in _OLD_NODE_API:
            # v1alpha1 kept the handler under spec.runtimeHandler: not a one-word change
            fix = replace_edit(doc, api.span, "node.k8s.io/v1", "use apiVersion node.k8s.io/v1") \
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
                f"RuntimeClass handler `{source_text(doc, handler)}` is not a lowercase DNS-1123 label (lowercase "
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
@no_fix_in_patches
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
    text = source_text(doc, value)
    if value.tag == "null":
        return finding(
            doc, "GL511", value.key_span or value.span,
            f"nodeSelector `{label}` has no value: it decodes as the empty string, so the pod "
            f"fits only nodes whose `{label}` label is empty and stays Pending (\"didn't match "
            f"Pod's node affinity/selector\"); give the value in quotes", severity="error")
    json_type = _JSON_TYPES.get(value.tag) or ("object" if value.is_map else "array")
    fix = replace_edit(doc, value.span, f'"{text}"', "quote the label value") if value.is_scalar else None
    return finding(
        doc, "GL511", value.span,
        f"nodeSelector `{label}: {text}` is not a string but a JSON {json_type}, and node "
        f"selectors map label names to strings: the API server rejects the object (\"cannot "
        f"unmarshal {json_type} into Go struct field ... of type string\"); "
        f"{'quote it' if fix else 'give one string value'}", severity="error", fix=fix)


def _deprecated_label(doc: Document, selector: Node | None, label: str, span: Span):
    new = _GFD_RENAMED[label]
    # unsafe: nodes labelled by an older GPU feature discovery only carry the old name
    fix = rename_key(doc, selector, span, label, new, safe=False)
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
    for _, container in containers_of(doc):
        image = container_cuda_image(container.image) if container.image else None
        # NGC framework images are built on devel and have no runtime flavour to move to
        if image is None or not image.is_devel or image.family != "nvidia-cuda":
            continue
        yield finding(
            doc, "GL512", container.image_node.span,
            f"{container_label(container)} runs the CUDA devel image `{container.image}`: it carries the "
            f"compiler, headers and static libraries (gigabytes every new node pulls before the "
            f"pod starts) that running an application does not need; use the `runtime` (or "
            f"`cudnn-runtime`) flavour of the same tag unless the pod really compiles CUDA code")


@check("GL513", kinds=("kubernetes",))
def cuda_image_without_gpu(doc: Document, ctx: Context):
    nvidia_classes = _nvidia_runtime_classes(ctx)
    if is_kustomize_patch(doc, ctx):
        return  # the base it is merged into may hold the GPU limit
    for pod, container in containers_of(doc):
        runtime_class = scalar_str(pod.spec.get("runtimeClassName"))
        if is_gpu_management(pod):
            continue
        if requests_gpus(container) or not is_cuda_image(container.image) or _opted_out(container):
            continue
        if _rejected_requests(container) or ("GL505" in ctx.enabled and _sets_visible_devices(container)) \
                or misplaced_gpu_resources(container):
            continue  # GL501/GL502 (the pod is rejected), GL505 or GL515 report the missing limit
        if runtime_class is None and gpu_limits(container):
            yield _zero_gpus_default_runtime(doc, ctx, container)
            continue
        if runtime_class is None and _nvidia_default_everywhere(ctx):
            yield finding(
                doc, "GL513", container.image_node.span,
                f"{container_label(container)} runs the CUDA image `{container.image}` without a GPU "
                f"limit, and every linted node configuration makes the NVIDIA runtime the default: the "
                f"image sets NVIDIA_VISIBLE_DEVICES=all, so the runtime exposes every GPU of the node to "
                f"it, unaccounted by the scheduler; request `nvidia.com/gpu` in limits, or set "
                f"NVIDIA_VISIBLE_DEVICES=void if it must not use GPUs")
            continue
        if runtime_class not in nvidia_classes:
            continue
        limit = "with a GPU limit of 0" if gpu_limits(container) else "without a GPU limit"
        yield finding(
            doc, "GL513", container.image_node.span,
            f"{container_label(container)} runs the CUDA image `{container.image}` {limit} in a pod with "
            f"`runtimeClassName: {runtime_class}` (an NVIDIA runtime): the image sets NVIDIA_VISIBLE_DEVICES=all, "
            f"so the runtime exposes every GPU of the node to it, unaccounted by the scheduler; "
            f"request `nvidia.com/gpu` in limits, or set NVIDIA_VISIBLE_DEVICES=void if it must "
            f"not use GPUs")


def _zero_gpus_default_runtime(doc: Document, ctx: Context, container: Container):
    """A CUDA image with an explicit GPU limit of 0 and no runtime class: what it gets
    depends on the node's default runtime."""

    name, value = next(iter(gpu_limits(container).items()))
    defaults = [config.runtimes.get(config.default_runtime) for config in ctx.fact("node-configs")]
    nvidia_default = any(entry is not None and entry.is_nvidia for entry in defaults)
    where = ("the linted node configuration makes the NVIDIA runtime the default, so it gets every GPU of the "
             "node" if nvidia_default else
             "it gets none where runc is the node's default runtime, and every GPU of the node where the NVIDIA "
             "runtime is the default (the GPU Operator's `CONTAINERD_SET_AS_DEFAULT`, which MicroK8s' GPU add-on has set)")
    return finding(
        doc, "GL513", value.span,
        f"{container_label(container)} runs the CUDA image `{container.image}` with `{name}: 0`, which does not keep GPUs away: {where}, since the image "
        f"sets NVIDIA_VISIBLE_DEVICES=all and the device plugin allocates nothing to override it (unless the "
        f"container toolkit ignores that variable in unprivileged containers); request the "
        f"GPUs it needs, or set NVIDIA_VISIBLE_DEVICES=void if it must not use GPUs",
        severity="warning" if nvidia_default else "info")


def _nvidia_default_everywhere(ctx: Context) -> bool:
    """Whether there are linted node configs and each makes an NVIDIA runtime the default
    (a pod without a runtime class runs under it on every node the files describe)."""
    configs = ctx.fact("node-configs")
    defaults = [config.runtimes.get(config.default_runtime) for config in configs]
    return bool(defaults) and all(entry is not None and entry.is_nvidia for entry in defaults)


def _nvidia_runtime_classes(ctx: Context) -> set[str]:
    """Names of the RuntimeClasses whose pods run under the NVIDIA runtime: linted ones
    whose handler is an NVIDIA runtime (by its name, or by the binary a linted node
    config gives it), and the GPU Operator's unless the linted files define them."""
    if "k8s.nvidia_runtime_classes" in ctx.cache:
        return ctx.cache["k8s.nvidia_runtime_classes"]
    nvidia_runtimes = {name for config in ctx.fact("node-configs")
                       for name, entry in config.runtimes.items() if entry.is_nvidia}
    handlers = {object_name(obj): scalar_str(obj.get("handler"))
                for doc in ctx.of_kind("kubernetes") for obj in runtime_classes(doc)}
    names = {n for n in GPU_OPERATOR_RUNTIME_CLASSES if n not in handlers}
    names |= {n for n, h in handlers.items() if n and h and (h in nvidia_runtimes or is_nvidia_handler(h, None))}
    ctx.cache["k8s.nvidia_runtime_classes"] = names
    return names


def _rejected_requests(container: Container) -> bool:
    """A device plugin resource requested without a limit, or with a request other than
    its limit: the API server rejects the pod (GL501, GL502)."""
    limits = device_plugin_resources(container, "limits")
    for name, value in device_plugin_resources(container, "requests").items():
        if name not in limits:
            return True
        wanted, asked = quantity(limits[name]), quantity(value)
        if wanted is not None and asked is not None and wanted != asked:
            return True
    return False


def _sets_visible_devices(container: Container) -> bool:
    return any(name == "NVIDIA_VISIBLE_DEVICES" for name, _, _ in env_vars(container))


def _opted_out(container: Container) -> bool:
    for name, _, value in env_vars(container):
        if name == "NVIDIA_VISIBLE_DEVICES" and (scalar_str(value) or "").strip().lower() in OPT_OUT:
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
        if tolerations is None and (doc.templated or is_kustomize_patch(doc, ctx)):
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
