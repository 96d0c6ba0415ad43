"""GPU Operator chart values judged by the chart of the release the cluster runs (GL483,
GL484), and the container toolkit's node layout settings in `toolkit.env` (GL489-GL492)."""

from __future__ import annotations

from gpulint.common.operator_chart import judge_values
from gpulint.common.toolkit_env import emit, judge_values_env, rancher_nodes
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding


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
