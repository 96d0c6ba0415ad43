"""GL488: the NVIDIA Container Toolkit the GPU Operator deploys cannot read the containerd 2.x
config of the nodes (`version = 3`): the toolkit reads version 3 configs from v1.17.4."""

from __future__ import annotations

import re

from gpulint.kinds.containerd.facts import containerd_file, is_drop_in
from gpulint.kinds.kubernetes.facts import object_kind, scalar_str
from gpulint.knowledge import gpu_operator
from gpulint.model import Document, Node
from gpulint.registry import Context, check, finding, related

# nvidia-container-toolkit v1.17.4 (CHANGELOG: "Add support for containerd version 3 config")
READS_V3 = (1, 17, 4)
_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def _containerd_2(ctx: Context) -> tuple[str, Document | None, Node | None] | None:
    """Why the nodes run containerd 2.x with a version 3 config: the fleet configuration, or
    a linted main containerd config of version 3 (words, its file, its `version` node)."""
    stated = str(((getattr(ctx.settings, "fleet", None) or {}).get("containerd-version")) or "")
    if stated.startswith("2"):
        return f"`containerd-version = \"{stated}\"` in the fleet configuration", None, None
    for doc in ctx.of_kind("containerd"):
        if doc.tree is None or is_drop_in(doc):
            continue
        found = containerd_file(doc)
        if found.version == 3 and found.version_node is not None:
            return f"the linted containerd config {doc.path} (`version = 3`)", doc, found.version_node
    return None


def _toolkits(doc: Document, ctx: Context):
    """(the node to point at, the toolkit version, words on where it comes from) of each
    toolkit this file deploys."""
    if doc.kind == "gpu-operator-values":
        toolkit = doc.tree.get("toolkit") if doc.tree is not None else None
        if toolkit is None or not toolkit.is_map or scalar_str(toolkit.get("enabled")) == "false":
            return
        node = toolkit.get("version")
        if node is not None:
            yield node, scalar_str(node), "`toolkit.version`"
            return
        judged = gpu_operator.judged_release(ctx.settings)
        default = gpu_operator.release_data(judged.tag)["values"].get("toolkit_version")
        yield toolkit, default, f"the chart's default toolkit of {judged.words()}"
        return
    for obj in doc.tree or ():
        if object_kind(obj) == "ClusterPolicy" and scalar_str(obj.get("spec", "toolkit", "enabled")) != "false":
            node = obj.get("spec", "toolkit", "version")
            if node is not None:
                yield node, scalar_str(node), "`spec.toolkit.version`"


@check("GL488", kinds=("gpu-operator-values", "kubernetes"))
def toolkit_reads_no_v3_config(doc: Document, ctx: Context):
    nodes = None
    for where, version, source in _toolkits(doc, ctx):
        match = _VERSION.match(version or "")
        if match is None or tuple(map(int, match.groups())) >= READS_V3:
            continue
        nodes = nodes or _containerd_2(ctx)
        if nodes is None:
            return
        words, config_doc, config_node = nodes
        yield finding(doc, "GL488", where,
                      f"the GPU Operator deploys container toolkit {version} ({source}), which reads no "
                      f"containerd config of version 3, and the nodes run containerd 2.x ({words}): the "
                      f"toolkit pod fails with `unable to load config: unsupported config version: 3` and "
                      f"no GPU runtime is configured; use toolkit v1.17.4 or later",
                      related=[related(config_doc, config_node, "the version 3 config")] if config_doc else [])
