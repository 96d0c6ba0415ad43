"""GL457: pods against the linted device plugin configs: a request the plugin refuses to
allocate, or a resource no linted config makes the plugin advertise.

A pod may land on any node the configs describe (each ConfigMap entry is one node pool's
config), so a pod is faulted only when every linted config that could serve it refuses it.
"""

from __future__ import annotations

from gpulint.crossfile.held_plugin_configs import held_configs
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
    pod_specs,
    quantity,
)
from gpulint.model import Document
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

_MIG = lazy(r"^nvidia\.com/mig-")


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
    if not plugin_configs or is_kustomize_patch(doc):
        return
    for pod in pod_specs(doc):
        for container in pod.containers:
            for resource, node in gpu_limits(container).items():
                amount = quantity(node)
                if amount is None or amount <= 0:
                    continue
                if amount > 1:
                    yield from _over_one(doc, pod, resource, node, int(amount), plugin_configs)
                if _MIG.match(resource):
                    yield from _mig_not_advertised(doc, pod, resource, node, plugin_configs)


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


def _mig_not_advertised(doc, pod, resource, node, plugin_configs):
    strategies = {mig_strategy(root) for _, root in plugin_configs}
    if "mixed" in strategies:
        return
    yield finding(doc, "GL457", node.key_span,
                  f"{pod.kind} `{pod.name or '?'}` asks for `{resource}`, but every linted device plugin "
                  f"config has `migStrategy` {' or '.join(sorted(strategies))}: only `mixed` advertises "
                  f"`nvidia.com/mig-<profile>` (with `single`, MIG devices are `nvidia.com/gpu`), so the pod "
                  f"stays Pending", severity="warning",
                  related=[related(d, (flag(root, "migStrategy") or root).span, f"`migStrategy: {mig_strategy(root)}`")
                           for d, root in plugin_configs])
