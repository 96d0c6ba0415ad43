"""GL814: the GPU Operator's values set the toolkit's accepted device-list sources and the
device plugin's device-list strategy apart, so GPU pods start without their GPUs."""

from __future__ import annotations

from gpulint.common.device_lists import CDI_DEFAULT_FROM, Env, mismatch
from gpulint.formats.template import is_placeholder
from gpulint.knowledge import gpu_operator
from gpulint.model import Document, Node, sequence
from gpulint.registry import Context, check, finding


def _env(tree: Node, component: str) -> Env:
    """A component's `env` list as name -> (value, value node)."""
    found = {}
    for item in sequence(tree.get(component, "env")):
        name, value = item.get("name"), item.get("value")
        if name is not None and name.str() and value is not None and value.str() is not None:
            found[name.str()] = (value.str().strip().lower(), value)
    return found


def _cdi_in_use(tree: Node, ctx: Context) -> bool:
    enabled = tree.get("cdi", "enabled")
    if enabled is not None:
        return enabled.str() != "false"
    return gpu_operator.judged_release(ctx.settings).at_least(*CDI_DEFAULT_FROM)


def _off(node: Node | None) -> bool:
    return node is not None and node.str() == "false"


@check("GL814", kinds=("gpu-operator-values",))
def device_list_mismatch(doc: Document, ctx: Context):
    tree = doc.tree
    if tree is None or not tree.is_map or _cdi_in_use(tree, ctx):
        return
    if tree.get("devicePlugin", "config", "name") is not None:
        return  # the plugin's config file may choose the strategy
    if any(_off(tree.get(component, "enabled")) for component in ("toolkit", "devicePlugin")):
        return  # a toolkit or plugin the operator does not deploy does not read this env
    toolkit, plugin = _env(tree, "toolkit"), _env(tree, "devicePlugin")
    if any(is_placeholder(value) for value, _ in (*toolkit.values(), *plugin.values())):
        return
    problem = mismatch(toolkit, plugin, "in `devicePlugin.env`")
    if problem is not None:
        yield finding(doc, "GL814", problem[0].span, problem[1])
