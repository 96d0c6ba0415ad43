"""GL493: the NVIDIA DRA driver set to hand out GPUs (`resources.gpus.enabled` with
`gpuResourcesEnabledOverride: true`) while the GPU Operator linted beside it deploys the NVIDIA
device plugin, which hands out the same GPUs as `nvidia.com/gpu`.

The DRA driver's chart refuses `resources.gpus.enabled` (its default) unless
`gpuResourcesEnabledOverride` is set, because the driver "cannot be deployed alongside the
standard GPU device plugin on the same node"; the override says the plugin is off, and NVIDIA's
install guide turns it off in the GPU Operator (`--set devicePlugin.enabled=false`)."""

from __future__ import annotations

from gpulint.kinds.commands.helm import CACHE, HelmCommand
from gpulint.kinds.kubernetes.facts import object_kind, scalar_str
from gpulint.model import Document, Node, Related, Span
from gpulint.registry import Context, check, finding, related

_OVERRIDE = "gpuResourcesEnabledOverride"
_GPUS = "resources.gpus.enabled"
# kubelet plugin placement: nodes set apart for DRA may carry the GPU Operator's
# `nvidia.com/gpu.deploy.device-plugin=false`, which the linted files do not show
_PLACEMENT = ("kubeletPlugin.nodeSelector", "kubeletPlugin.affinity")


def _on(value: str | None) -> bool | None:
    """A switch as written: True, False, or None when it is neither (a template)."""
    return {"true": True, "false": False}.get((value or "").lower())


def _plugin_switches(ctx: Context) -> list[tuple[bool | None, Related]]:
    """(device plugin on, where it is said) for each linted GPU Operator chart values file and
    ClusterPolicy; both default to on (`devicePlugin.enabled: true` in the chart's values,
    `DevicePluginSpec.IsEnabled` for a ClusterPolicy without it)."""
    def compute():
        out = []
        for doc in ctx.of_kind("gpu-operator-values"):
            if doc.tree is None or not doc.tree.is_map:
                continue
            node = doc.tree.get("devicePlugin", "enabled")
            policy = doc.tree.get("clusterPolicy", "deployCR")
            if policy is not None and policy.value is False:
                node = policy  # no ClusterPolicy, no device plugin (a GPUCluster runs DRA instead)
            out.append(_switch(doc, node, doc.tree.get("devicePlugin") or doc.tree,
                               "the GPU Operator chart values", "devicePlugin.enabled"))
        for doc in ctx.of_kind("kubernetes"):
            for obj in doc.tree or ():
                if object_kind(obj) == "ClusterPolicy" and (scalar_str(obj.get("apiVersion")) or "").startswith(
                        "nvidia.com/"):
                    node = obj.get("spec", "devicePlugin", "enabled")
                    out.append(_switch(doc, node, obj.get("spec", "devicePlugin") or obj.get("kind"),
                                       "the ClusterPolicy", "spec.devicePlugin.enabled"))
        return out
    return ctx.memo("dra.device-plugin-switches", compute)


def _switch(doc: Document, node: Node | None, holder: Node, whose: str, key: str) -> tuple[bool | None, Related]:
    if node is None:
        return True, related(doc, holder, f"{whose}, without `{key}` (the device plugin is on by default)")
    on = node.value if isinstance(node.value, bool) else _on(scalar_str(node))
    return on, related(doc, node, f"{whose}: `{key}: {scalar_str(node)}`")


def _helm_switches(doc: Document, commands: list[HelmCommand]) -> list[tuple[bool | None, Related]]:
    """The same for the gpu-operator helm lines of a file: `--set devicePlugin.enabled`,
    else the chart's default, unknown where `-f` values may say otherwise."""
    out = []
    for command in commands:
        if command.chart != "gpu-operator":
            continue
        setting = command.setting("devicePlugin.enabled")
        if setting is not None:
            out.append((_on(setting.value), Related(doc.path, *_line_column(doc, setting.start),
                                                    f"`--set devicePlugin.enabled={setting.value}`")))
        else:
            word = command.chart_word
            out.append((None if command.values_files else True,
                        Related(doc.path, *_line_column(doc, word.start),
                                "the gpu-operator install, which keeps the device plugin (the chart's default)")))
    return out


def _line_column(doc: Document, offset: int) -> tuple[int, int]:
    span: Span = doc.index.span(offset, offset)
    return span.line, span.column


def _all_on(switches) -> list[Related] | None:
    """Where the device plugin is said to be on, when every switch says so (and one does)."""
    if not switches or any(on is not True for on, _ in switches):
        return None  # a linted GPU Operator without it may be the cluster's
    return [where for _, where in switches]


def _message(where: str, operator: str = "the linted GPU Operator") -> str:
    return (f"{where} lets the NVIDIA DRA driver hand out GPUs (`{_GPUS}`, the chart's default), and "
            f"{operator} deploys the NVIDIA device plugin: both advertise the same GPUs, and "
            f"neither sees the other's allocations, so a GPU given to one pod through a ResourceClaim can be "
            f"given to another as `nvidia.com/gpu` (the DRA chart: \"this DRA driver cannot be deployed "
            f"alongside the standard GPU device plugin on the same node\"); set `devicePlugin.enabled=false` "
            f"in the GPU Operator, or `{_GPUS}=false` to keep the DRA driver to ComputeDomains")


def _gpu_override(doc: Document) -> Node | None:
    """The `gpuResourcesEnabledOverride: true` of DRA driver values that hand out GPUs on every
    node the kubelet plugin runs on (no placement the file sets), or None."""
    root = doc.tree
    if root is None or not root.is_map:
        return None
    override = root.get(_OVERRIDE)
    gpus = root.get("resources", "gpus", "enabled")
    if override is None or override.value is not True or (gpus is not None and gpus.value is not True):
        return None
    if any(_set_apart(root.get(*key.split("."))) for key in _PLACEMENT):
        return None
    return override


@check("GL493", kinds=("dra-driver-values",))
def dra_values_beside_device_plugin(doc: Document, ctx: Context):
    override = _gpu_override(doc)
    plugin = _all_on(_plugin_switches(ctx)) if override is not None else None
    if plugin is not None:
        yield finding(doc, "GL493", override.span, _message("`gpuResourcesEnabledOverride: true`"), related=plugin)


def _set_apart(node: Node | None) -> bool:
    return node is not None and node.is_map and bool(node.value)


@check("GL493", kinds=("commands",))
def dra_helm_beside_device_plugin(doc: Document, ctx: Context):
    commands = doc.cache.get(CACHE, ())
    judged = False
    for command in commands:
        override = command.setting(_OVERRIDE)
        if command.chart != "dra-driver" or override is None or _on(override.value) is not True:
            continue
        judged = True
        gpus = command.setting(_GPUS)
        if (gpus is not None and _on(gpus.value) is not True) or command.values_files or any(
                s.key.startswith(_PLACEMENT) for s in command.settings):
            continue  # a values file or a node placement this line does not show
        plugin = _all_on(_helm_switches(doc, commands) + _plugin_switches(ctx))
        if plugin is not None:
            where = doc.index.span(override.start, override.start + len(override.key))
            yield finding(doc, "GL493", where, _message(f"`--set {_OVERRIDE}=true`"), related=plugin)
    if not judged:
        yield from _operator_line_beside_dra_values(doc, ctx, commands)


def _operator_line_beside_dra_values(doc: Document, ctx: Context, commands):
    """A gpu-operator install line that keeps the device plugin, in a file that installs no DRA
    driver, beside linted DRA driver values that hand out GPUs: said at the line."""
    helm = _helm_switches(doc, commands)
    overrides = [related(d, node.span, "the DRA driver's `gpuResourcesEnabledOverride: true`")
                 for d in ctx.of_kind("dra-driver-values") if (node := _gpu_override(d)) is not None]
    if not helm or not overrides or _all_on(helm + _plugin_switches(ctx)) is None:
        return
    for command in commands:
        if command.chart != "gpu-operator":
            continue
        setting = command.setting("devicePlugin.enabled")
        start, length = (setting.start, len(setting.key)) if setting else (command.chart_word.start,
                                                                           len(command.chart_word.text))
        yield finding(doc, "GL493", doc.index.span(start, start + length),
                      _message("the linted DRA driver chart values' `gpuResourcesEnabledOverride: true`",
                               "this gpu-operator install"),
                      related=overrides)
