"""GPU Operator chart values judged by the chart of the release the cluster runs (GL483,
GL484)."""

from __future__ import annotations

from gpulint.common.operator_chart import chart_reads, policy_problems, unknown_keys
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding


def _judged(ctx: Context) -> gpu_operator.Judged:
    return gpu_operator.judged_release(ctx.settings)


def _other_releases(dotted: str, judged: gpu_operator.Judged) -> str:
    path = tuple(dotted.split("."))
    having = [tag for tag in gpu_operator.releases()
              if chart_reads(gpu_operator.release_data(tag)["values"], path)]
    return gpu_operator.other_releases(having, judged, "the chart", ("reads", "read"))


def _policy(doc: Document, judged: gpu_operator.Judged, unknown: bool):
    """The problems of the values the chart copies into the ClusterPolicy: pruned fields
    (unknown) or refused values."""
    if doc.tree is not None:
        yield from (p for p in policy_problems(doc.tree, judged) if p.unknown == unknown)


@check("GL483", kinds=("gpu-operator-values",))
def values_key_unknown(doc: Document, ctx: Context):
    if doc.tree is None:
        return
    judged = _judged(ctx)
    for unknown in unknown_keys(doc.tree, judged):
        near = f" (did you mean `{unknown.suggestion}`?)" if unknown.suggestion else ""
        yield finding(doc, "GL483", unknown.node.anchor,
                      f"`{unknown.path}` is no value of the gpu-operator chart of {judged.words()}{near}"
                      f"{_other_releases(unknown.path, judged)}: "
                      f"no template reads it and Helm ignores keys it does not know, so the setting "
                      f"is silently lost")
    for problem in _policy(doc, judged, unknown=True):
        yield finding(doc, "GL483", problem.span,
                      f"the chart copies this into the ClusterPolicy, whose CRD in {judged.words()} has "
                      f"no `{problem.path}`{problem.suggestion()}: the API server prunes it (`{problem.message}`)"
                      f", so the setting is silently lost")


@check("GL484", kinds=("gpu-operator-values",))
def values_refused_in_policy(doc: Document, ctx: Context):
    judged = _judged(ctx)
    for problem in _policy(doc, judged, unknown=False):
        yield finding(doc, "GL484", problem.span,
                      f"the chart copies this into the ClusterPolicy and the API server refuses it "
                      f"(`{problem.message}`), so the install or upgrade fails; judged by {judged.words()}")
