"""GL813: GPUs a Docker Swarm node advertises (`node-generic-resources` in daemon.json)
that the NVIDIA runtime on that node never reads.

Swarm hands a task the resources it assigned as environment variables named
`DOCKER_RESOURCE_` + the resource kind in capitals (swarmkit api/genericresource
EnvFormat: `strings.ToUpper(prefix + "_" + kind)`, the kind kept as written otherwise,
dashes included). The NVIDIA runtime looks for its GPUs first in the variables its
`swarm-resource` setting names (comma-separated, exact names), then in
NVIDIA_VISIBLE_DEVICES; with `swarm-resource` unset or naming other variables the
assignment is ignored and a CUDA image, whose NVIDIA_VISIBLE_DEVICES is `all`, gets every
GPU of the node.
"""

from __future__ import annotations

from gpulint.kinds.toolkit.node import node_configs_of
from gpulint.model import Document, Node, Span, str_value
from gpulint.registry import Context, check, finding, related

PREFIX = "DOCKER_RESOURCE_"


def gpu_resources(tree: Node | None) -> list[tuple[str, Node]]:
    """(kind, entry) of the daemon.json `node-generic-resources` entries that advertise
    GPUs: a kind that says so (`gpu`, `NVIDIA-GPU`) or a value that is an NVIDIA GPU UUID."""
    entries = tree.get("node-generic-resources") if tree is not None and tree.is_map else None
    found = []
    for entry in entries.value if entries is not None and entries.is_seq else ():
        kind, eq, value = (str_value(entry) or "").partition("=")
        if eq and kind and ("gpu" in kind.lower() or value.upper().startswith("GPU-")):
            found.append((kind, entry))
    return found


@check("GL813", kinds=("nvidia-toolkit",))
def swarm_resource_not_read(doc: Document, ctx: Context):
    advertised = [(kind, entry, config) for config in node_configs_of(doc, ctx.fact("node-configs"))
                  if config.kind == "daemon-json"
                  for kind, entry in gpu_resources(config.doc.tree)]
    if not advertised:
        return
    setting = doc.tree.get("swarm-resource")
    names = [n.strip() for n in (str_value(setting) or "").split(",") if n.strip()]
    unread = [(kind, entry, config) for kind, entry, config in advertised if PREFIX + kind.upper() not in names]
    if not unread:
        return
    kinds = sorted({kind for kind, _, _ in unread})
    wanted = ", ".join(f"`{PREFIX}{k.upper()}`" for k in kinds)
    effect = ("so the runtime ignores the GPUs Swarm assigns and gives a CUDA image, whose "
              "NVIDIA_VISIBLE_DEVICES is `all`, every GPU of the node")
    related_ = [related(config.doc, entry, f"`{kind}` advertised to Swarm") for kind, entry, config in unread[:3]]
    if not names:
        yield finding(doc, "GL813", setting.span if setting is not None else Span.point(1, 1),
                      f"this node advertises GPUs to Swarm (`node-generic-resources` kind "
                      f"{', '.join(f'`{k}`' for k in kinds)}), which hands a task its GPUs as {wanted}, "
                      f"but `swarm-resource` is not set, {effect}; set `swarm-resource = \"{PREFIX}"
                      f"{kinds[0].upper()}\"`", related=related_)
        return
    yield finding(doc, "GL813", setting.span,
                  f"`swarm-resource` names {', '.join(f'`{n}`' for n in names)}, but Swarm hands a task the "
                  f"GPUs of `node-generic-resources` kind {', '.join(f'`{k}`' for k in kinds)} as {wanted} "
                  f"(`{PREFIX}` and the kind in capitals), {effect}; name {wanted} in `swarm-resource`",
                  related=related_)
