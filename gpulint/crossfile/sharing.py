"""GL457: pods against the linted device plugin configs: a request the plugin refuses to
allocate, or a resource no linted config makes the plugin advertise. GL451: a device plugin
config in the GPU Operator's values whose `migStrategy` the operator overrides.

A pod may land on any node the configs describe (each ConfigMap entry is one node pool's
config), so a pod is faulted only when every linted config that could serve it refuses it.

The GPU Operator passes its `mig.strategy` to the device plugin it deploys as the MIG_STRATEGY
environment variable (controllers/object_controls.go applyMIGConfiguration), and the plugin
takes a flag or environment variable over its config file ("The order of precedence for
setting each option is (1) command line flag, (2) environment variable, (3) configuration
file", k8s-device-plugin README): the operator's strategy is the one its plugin runs.
"""

from __future__ import annotations

from typing import NamedTuple

from gpulint.crossfile.held_plugin_configs import held_configs
from gpulint.formats.template import is_placeholder
from gpulint.kinds.device_plugin.facts import (
    configs,
    fails_requests_over_one,
    flag,
    mig_strategy,
    shared,
)
from gpulint.kinds.kubernetes.facts import (
    gpu_limits,
    is_kustomize_patch,
    object_kind,
    pod_specs,
    quantity,
    scalar_str,
)
from gpulint.model import Document, Node
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

_MIG = lazy(r"^nvidia\.com/mig-")
# the gpu-operator chart's values.yaml: `mig: strategy: single` (deployments/gpu-operator/values.yaml)
CHART_MIG_STRATEGY = "single"


class _Strategy(NamedTuple):
    doc: Document
    node: Node  # where it is written, or what the chart's default stands for
    value: str
    words: str


def _operator_strategies(ctx: Context) -> list[_Strategy]:
    """The MIG strategy each linted GPU Operator deployment gives the device plugin it runs:
    the chart values' `mig.strategy` (the chart's default when unset) or a ClusterPolicy's
    `spec.mig.strategy` (when set; unset, older operators pass `none` and newer ones none)."""
    def compute() -> list[_Strategy]:
        out = []
        for doc in ctx.of_kind("gpu-operator-values"):
            tree = doc.tree
            if tree is None or not tree.is_map or scalar_str(tree.get("devicePlugin", "enabled")) == "false":
                continue
            node = tree.get("mig", "strategy")
            if node is None:
                out.append(_Strategy(doc, tree.get("mig") or tree.get("devicePlugin") or tree, CHART_MIG_STRATEGY,
                                     f"the chart's default `mig.strategy: {CHART_MIG_STRATEGY}`"))
            elif isinstance(node.value, str) and not is_placeholder(node.value):
                out.append(_Strategy(doc, node, node.value, f"`mig.strategy: {node.value}`"))
        for doc in ctx.of_kind("kubernetes"):
            for obj in doc.tree or ():
                if object_kind(obj) != "ClusterPolicy" \
                        or scalar_str(obj.get("spec", "devicePlugin", "enabled")) == "false":
                    continue
                node = obj.get("spec", "mig", "strategy")
                if node is not None and isinstance(node.value, str) and not is_placeholder(node.value):
                    out.append(_Strategy(doc, node, node.value, f"`spec.mig.strategy: {node.value}`"))
        return out

    return ctx.memo("crossfile.operator-mig-strategies", compute)


def _strategies(ctx: Context, plugin_configs: list) -> list[_Strategy]:
    """The MIG strategy of every linted device plugin deployment: the operators', and each
    config's own where no operator overrides it. Worked out once per run: `plugin_configs`
    is the run's own list (`_plugin_configs`)."""
    def compute() -> list[_Strategy]:
        operators = _operator_strategies(ctx)
        overridden = {id(s.doc) for s in operators if s.doc.kind == "gpu-operator-values"}
        out = list(operators)
        for d, root in plugin_configs:
            if id(d) not in overridden:
                strategy = mig_strategy(root)
                out.append(_Strategy(d, flag(root, "migStrategy") or root, strategy, f"`migStrategy: {strategy}`"))
        return out

    return ctx.memo("crossfile.device-plugin-strategies", compute)


def _plugin_configs(ctx: Context) -> list:
    """(document, config root) of every linted device plugin config."""
    def compute() -> list:
        out = [(doc, c.root) for doc in ctx.of_kind("device-plugin") for c in configs(doc)]
        out += [(doc, c.root) for kind in ("gpu-operator-values", "kubernetes") for doc in ctx.of_kind(kind)
                for c in held_configs(doc)]
        return out

    return ctx.memo("crossfile.device-plugin-configs", compute)


def _refusing(resource: str, plugin_configs: list) -> list:
    """The shared entries advertising `resource` that refuse more than one, when every
    config advertising it does so; [] when any config would allocate several."""
    out = []
    for doc, root in plugin_configs:
        entries = [s for s in shared(root) if s.advertised == resource]
        if entries and fails_requests_over_one(root, entries[0].strategy):
            out.append((doc, entries[0]))
        elif entries or _unshared(resource, root):
            return []  # a node with this config allocates several
    return out


def _unshared(resource: str, root) -> bool:
    """Whether a node with this config advertises `resource` without sharing it."""
    if _MIG.match(resource):
        return mig_strategy(root) == "mixed"
    return resource == "nvidia.com/gpu"


@check("GL457", kinds=("kubernetes",))
def request_refused_by_device_plugin(doc: Document, ctx: Context):
    plugin_configs = _plugin_configs(ctx)
    strategies = _strategies(ctx, plugin_configs)
    if not strategies or is_kustomize_patch(doc):
        return
    for pod in pod_specs(doc):
        for container in pod.containers:
            for resource, node in gpu_limits(container).items():
                amount = quantity(node)
                if amount is None or amount <= 0:
                    continue
                if amount > 1 and plugin_configs:
                    yield from _over_one(doc, pod, resource, node, int(amount), plugin_configs)
                if _MIG.match(resource):
                    yield from _mig_not_advertised(doc, pod, resource, node, strategies)


def _over_one(doc, pod, resource, node, amount, plugin_configs):
    refusing = _refusing(resource, plugin_configs)
    if not refusing:
        return
    yield finding(doc, "GL457", node.span,
                  f"{pod.kind} `{pod.name or '?'}` asks for {amount} `{resource}`, which the linted device "
                  f"plugin config shares with `failRequestsGreaterThanOne` (MPS sets it by default): the "
                  f"plugin refuses the allocation (`maximum request size for shared resources is 1; found "
                  f"{amount}`) and the pod fails with UnexpectedAdmissionError; ask for 1",
                  related=[related(d, entry.node, f"`{resource}` shared with {entry.replicas} replicas")
                           for d, entry in refusing])


def _mig_not_advertised(doc, pod, resource, node, strategies: list[_Strategy]):
    values = {s.value for s in strategies}
    if "mixed" in values:
        return
    yield finding(doc, "GL457", node.key_span,
                  f"{pod.kind} `{pod.name or '?'}` asks for `{resource}`, but every linted device plugin "
                  f"deployment runs MIG strategy {' or '.join(sorted(values))}: only `mixed` advertises "
                  f"`nvidia.com/mig-<profile>` (with `single`, MIG devices are `nvidia.com/gpu`), so the pod "
                  f"stays Pending", severity="warning",
                  related=[related(s.doc, s.node.span, s.words) for s in strategies])


@check("GL451", kinds=("gpu-operator-values",))
def mig_strategy_overridden_by_operator(doc: Document, ctx: Context):
    operator = next((s for s in _operator_strategies(ctx) if s.doc is doc), None)
    if operator is None:
        return
    for config in held_configs(doc):
        written = flag(config.root, "migStrategy")
        if written is None or not isinstance(written.value, str) or written.value == operator.value \
                or "mixed" not in (written.value, operator.value):
            continue  # `none` and `single` advertise the same `nvidia.com/gpu` on nodes without MIG
        yield finding(doc, "GL451", written.span,
                      f"`migStrategy: {written.value}` in device plugin config `{config.name}` is overridden: "
                      f"the GPU Operator passes {operator.words} to the device plugin as MIG_STRATEGY, and "
                      f"the plugin takes an environment variable over its config file, so it runs "
                      f"`{operator.value}`; set `mig.strategy: {written.value}` in the values instead",
                      related=[related(doc, operator.node.span, operator.words)])
