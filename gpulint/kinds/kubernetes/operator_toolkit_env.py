"""The container toolkit's node layout settings (`toolkit.env`, GL489-GL492) in GPU Operator
objects: a ClusterPolicy's `spec.toolkit.env`, and a k3s/RKE2 HelmChart's `valuesContent` and
`spec.set` keys (a HelmChart of helm.cattle.io says the nodes run k3s or RKE2, whose
helm-controller deploys it)."""

from __future__ import annotations

from gpulint.common.toolkit_env import (
    Toolkit,
    configures_runtime,
    emit,
    env_entries,
    judge_env,
    missing_at,
    rancher_nodes,
    set_entries,
    values_toolkit,
)
from gpulint.kinds.kubernetes.facts import scalar_str
from gpulint.kinds.kubernetes.operator_helmchart import operator_charts
from gpulint.kinds.kubernetes.operator_objects import operator_objects
from gpulint.model import Document
from gpulint.registry import Context, check

CODES = ("GL489", "GL490", "GL491", "GL492")


@check(*CODES, kinds=("kubernetes",))
def cluster_policy_toolkit_env(doc: Document, ctx: Context):
    for obj, kind, _ in operator_objects(doc):
        spec = obj.get("spec")
        if kind != "ClusterPolicy" or spec is None or not configures_runtime(spec):
            continue
        deployed = Toolkit(scalar_str(spec.get("toolkit", "version")), "`spec.toolkit.version`")
        found = judge_env(env_entries(spec.get("toolkit", "env")), deployed, rancher_nodes(ctx), missing_at(spec))
        yield from emit(doc, ctx, found)


@check(*CODES, kinds=("kubernetes",))
def helmchart_toolkit_env(doc: Document, ctx: Context):
    for obj, judged, content in operator_charts(doc, ctx):
        if content is None and obj.get("spec", "valuesContent") is not None:
            continue  # values Helm cannot read either: nothing is known of the env
        sets = obj.get("spec", "set")
        given = {key: scalar_str(node) for key, node in sets.items()} if sets is not None and sets.is_map else {}
        if not configures_runtime(content) or given.get("toolkit.enabled") == "false" \
                or given.get("cdi.nriPluginEnabled") == "true":
            continue
        # `spec.set` adds to what valuesContent holds; either may name the socket
        entries = env_entries(content.get("toolkit", "env") if content is not None else None)
        entries += set_entries((key, value, sets.get(key).span) for key, value in given.items())
        stated = given.get("toolkit.version")
        deployed = Toolkit(stated, "`toolkit.version` of `spec.set`") if stated else values_toolkit(content, judged)
        where = missing_at(content) or (obj.get("spec", "chart") or obj).span
        yield from emit(doc, ctx, judge_env(entries, deployed, "a HelmChart of helm.cattle.io deploys the operator",
                                            where))
