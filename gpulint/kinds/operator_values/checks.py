"""GPU Operator chart values judged by the chart of the release the cluster runs (GL483,
GL484), the container toolkit's node layout settings in `toolkit.env` (GL489-GL492), and
the chart's own validations of its GPUCluster switch (GL495)."""

from __future__ import annotations

from gpulint.common.operator_chart import (
    gpu_cluster_refusals,
    judge_values,
    refusal_words,
)
from gpulint.common.toolkit_env import emit, judge_values_env, rancher_nodes
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding, related


@check("GL483", "GL484", kinds=("gpu-operator-values",))
def chart_values(doc: Document, ctx: Context):
    if doc.tree is None:
        return
    for code, where, message in judge_values(doc.tree, gpu_operator.judged_release(ctx.settings)):
        yield finding(doc, code, where, message)


@check("GL489", "GL490", "GL491", "GL492", kinds=("gpu-operator-values",))
def toolkit_layout(doc: Document, ctx: Context):
    if doc.tree is None:
        return
    judged = gpu_operator.judged_release(ctx.settings)
    yield from emit(doc, ctx, judge_values_env(doc.tree, judged, rancher_nodes(ctx)))


@check("GL495", kinds=("gpu-operator-values",))
def gpu_cluster_refused(doc: Document, ctx: Context):
    root = doc.tree
    if root is None or not root.is_map:
        return

    def node(key: str):
        found = root.get(*key.split("."))
        return found if found is not None and isinstance(found.value, bool) else None

    def written(key: str):
        found = node(key)
        return None if found is None else found.value

    for message, keys in gpu_cluster_refusals(written, gpu_operator.judged_release(ctx.settings)):
        others = [k for k in keys if k != "gpuCluster.deployCR"]
        yield finding(doc, "GL495", node("gpuCluster.deployCR").span, refusal_words(message, keys),
                      related=[related(doc, node(k), f"`{k}: {str(written(k)).lower()}`") for k in others])

