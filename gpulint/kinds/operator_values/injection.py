"""GL814: the GPU Operator's values set the toolkit's accepted device-list sources and the
device plugin's device-list strategy apart, so GPU pods start without their GPUs."""

from __future__ import annotations

from gpulint.formats.template import is_placeholder
from gpulint.knowledge import gpu_operator
from gpulint.model import Document, Node, sequence
from gpulint.registry import Context, check, finding

_ENVVAR_UNPRIVILEGED = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"
_VOLUME_MOUNTS = "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"
# the first release whose chart enables CDI by default; under CDI the operator hands devices
# to containers through CDI, not through the variable or the volume mounts
_CDI_DEFAULT_FROM = (25, 10)


def _env(tree: Node, component: str) -> dict[str, tuple[str, Node]]:
    """A component's `env` list as name -> (value as written, value node)."""
    found = {}
    for item in sequence(tree.get(component, "env")):
        name, value = item.get("name"), item.get("value")
        if name is not None and name.str() and value is not None and value.str() is not None:
            found[name.str()] = (value.str().strip().lower(), value)
    return found


def _cdi_in_use(tree: Node, ctx: Context) -> bool:
    enabled = tree.get("cdi", "enabled")
    if enabled is not None:
        return enabled.value is not False and enabled.str() != "false"
    return gpu_operator.judged_release(ctx.settings).at_least(*_CDI_DEFAULT_FROM)


def _said(plugin: dict) -> str:
    return "is envvar" if "DEVICE_LIST_STRATEGY" in plugin else "defaults to envvar"


@check("GL814", kinds=("gpu-operator-values",))
def device_list_mismatch(doc: Document, ctx: Context):
    tree = doc.tree
    if tree is None or not tree.is_map or _cdi_in_use(tree, ctx):
        return
    if tree.get("devicePlugin", "config", "name") is not None:
        return  # the plugin's config file may choose the strategy
    toolkit, plugin = _env(tree, "toolkit"), _env(tree, "devicePlugin")
    if any(is_placeholder(value) for value, _ in (*toolkit.values(), *plugin.values())):
        return
    strategy = plugin.get("DEVICE_LIST_STRATEGY", ("envvar", None))[0]
    strategies = {part.strip() for part in strategy.split(",")}
    refused = toolkit.get(_ENVVAR_UNPRIVILEGED)
    if refused is not None and refused[0] == "false" and strategies == {"envvar"}:
        yield finding(doc, "GL814", refused[1].span,
                      f"the toolkit is told to ignore `NVIDIA_VISIBLE_DEVICES` in unprivileged "
                      f"containers, but the device plugin hands GPUs to containers through that "
                      f"variable (`DEVICE_LIST_STRATEGY` {_said(plugin)}): every unprivileged GPU pod starts without "
                      f"its GPUs or the driver (`CUDA driver version is insufficient`); set "
                      f"`DEVICE_LIST_STRATEGY=volume-mounts` in `devicePlugin.env`")
        return
    accepted = toolkit.get(_VOLUME_MOUNTS)
    if "volume-mounts" in strategies and (accepted is None or accepted[0] != "true"):
        where = plugin["DEVICE_LIST_STRATEGY"][1]
        yield finding(doc, "GL814", where.span,
                      f"the device plugin hands GPUs to containers as volume mounts, but the "
                      f"toolkit reads them only with `{_VOLUME_MOUNTS}=true` in `toolkit.env` "
                      f"(the default is false): GPU pods start without their GPUs")
