"""The GPU Operator installed through a k3s/RKE2 `HelmChart` (helm.cattle.io): its
`spec.valuesContent` read as chart values where it is written, and the keys of `spec.set`,
judged by the chart release `spec.version` names (GL483, GL484)."""

from __future__ import annotations

from gpulint.common.operator_chart import (
    OPERATOR_CHART,
    judge_setting,
    judge_values,
)
from gpulint.formats.embedded import embedded_roots
from gpulint.formats.errors import ParseError
from gpulint.formats.template import neutralise
from gpulint.kinds.kubernetes.facts import objects, scalar_str
from gpulint.knowledge import gpu_operator
from gpulint.model import Document
from gpulint.registry import Context, check, finding


def _operator_charts(doc: Document):
    for obj, kind in objects(doc):
        if kind != "HelmChart":
            continue
        api = scalar_str(obj.get("apiVersion")) or ""
        chart = scalar_str(obj.get("spec", "chart")) or ""
        if api.startswith("helm.cattle.io/") and OPERATOR_CHART.search(chart):
            yield obj


def operator_charts(doc: Document, ctx: Context):
    """(HelmChart object, the release it is judged by, its `valuesContent` read as chart values
    or None) of each HelmChart of the gpu-operator chart."""
    for obj in _operator_charts(doc):
        stated = scalar_str(obj.get("spec", "version"))
        judged = gpu_operator.judged_release(ctx.settings, stated, f"`spec.version: {stated}` of the HelmChart")
        yield obj, judged, _values_content(doc, obj)


def _values_content(doc: Document, obj):
    content = obj.get("spec", "valuesContent")
    if content is None or not isinstance(content.value, str):
        return None
    try:
        # the text the tree was read from: a template's expressions set aside
        text = neutralise(doc.text) if doc.templated else doc.text
        roots = embedded_roots(text, doc, content, "the embedded chart values")
    except ParseError:
        return None  # Helm refuses it too; the values are not judged
    return roots[0] if len(roots) == 1 and roots[0].is_map else None


@check("GL483", "GL484", kinds=("kubernetes",))
def helmchart_values(doc: Document, ctx: Context):
    for obj, judged, content in operator_charts(doc, ctx):
        if content is not None:
            for code, where, message in judge_values(content, judged):
                yield finding(doc, code, where, message)
        sets = obj.get("spec", "set")
        for key, node in sets.items() if sets is not None else ():
            # the key against the chart; the value's type is the HelmChart schema's to judge
            said = judge_setting(key, None, False, judged)
            if said is not None:
                yield finding(doc, said[0], node.anchor, said[2])
