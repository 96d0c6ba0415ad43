"""GPU Operator chart values judged by the chart of the release the cluster runs (GL483,
GL484)."""

from __future__ import annotations

from gpulint.common.operator_chart import judge_values
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding


@check("GL483", "GL484", kinds=("gpu-operator-values",))
def chart_values(doc: Document, ctx: Context):
    if doc.tree is None:
        return
    for code, where, message in judge_values(doc.tree, gpu_operator.judged_release(ctx.settings)):
        yield finding(doc, code, where, message)
