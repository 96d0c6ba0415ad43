"""What other files' checks read of a shared manifest's objects, kind by kind: a kept
object (`facts.shared_objects`) of one of these kinds is a copy holding only those keys,
each with its position (a finding's `related` entries point at them).

A spec maps a key to what is read below it: `True` for the whole value; a spec of keys
applies to a mapping, and to each item of a sequence. Objects of kinds not named here are
kept whole. Who reads what (change the spec with the reader):

- every object: `kind` (each reader picks objects by it) and `apiVersion`
  (`crossfile.nodes.kubelet_cgroup_driver`: a kubeadm object beside a KubeletConfiguration;
  `dra.dra_api_version`; `operator_driver_crd` for NVIDIADrivers);
- the taints of the GPU nodes (`scheduling._taint_lists`, GL514): kubeadm's InitConfiguration
  and JoinConfiguration `nodeRegistration.taints`, a Node's `spec.taints`, a Karpenter
  NodePool's `spec.template.spec.taints`, an eksctl ClusterConfig's node groups' `taints`;
  kubeadm's ClusterConfiguration, UpgradeConfiguration and ResetConfiguration, and kind's
  and Cluster API's `Cluster`: nothing more;
- RuntimeClass: `metadata.name`, `handler` (`scheduling._nvidia_runtime_classes`; GL701, and
  GL702, the project check that reports on the RuntimeClass);
- KubeletConfiguration: `cgroupDriver` (`crossfile.nodes.kubelet_cgroup_driver`; the
  object itself is where an unset driver is reported);
- NVIDIADriver: `metadata.name`, `spec.version` (`fleet.operator_declarations`);
- a DaemonSet's or Pod's pod: each container's `name`, `image`, `command`, `args` and the
  `name` and `value` of its `env` entries (`plugin_releases`, `mps._deployments`), and the
  object's `metadata.name` (`PodSpec.name`); not the pod template's metadata (a kept pod's
  `PodSpec.metadata` is None);
- ResourceClaimTemplate, ResourceClaim: `metadata.name` and each device request's `name`,
  `deviceClassName` and `selectors`, also under `exactly` and `firstAvailable`
  (`dra.defined_names`, `dra.requests`; dra_checks GL476, GL477);
- DeviceClass: `metadata.name`, `spec.selectors` (`dra_checks._gpu_class`, GL473);
- ComputeDomain: `spec.channel.resourceClaimTemplate.name` (`dra_checks._domain_templates`).
"""

from __future__ import annotations

from gpulint.model import Node

_OBJECT = {"apiVersion": True, "kind": True}
_NAMED = {**_OBJECT, "metadata": {"name": True}}

_CONTAINER = {"name": True, "image": True, "command": True, "args": True, "env": {"name": True, "value": True}}
_POD = {"containers": _CONTAINER, "initContainers": _CONTAINER, "ephemeralContainers": _CONTAINER}

_PICKS = {"deviceClassName": True, "selectors": True}
_CLAIM = {"devices": {"requests": {"name": True, **_PICKS, "exactly": _PICKS, "firstAvailable": _PICKS}}}

SPECS: dict[str, dict] = {
    "ClusterConfiguration": _OBJECT,
    "UpgradeConfiguration": _OBJECT,
    "ResetConfiguration": _OBJECT,
    "Cluster": _OBJECT,
    "InitConfiguration": {**_OBJECT, "nodeRegistration": {"taints": True}},
    "JoinConfiguration": {**_OBJECT, "nodeRegistration": {"taints": True}},
    "Node": {**_OBJECT, "spec": {"taints": True}},
    "NodePool": {**_OBJECT, "spec": {"template": {"spec": {"taints": True}}}},
    "ClusterConfig": {**_OBJECT, "nodeGroups": {"taints": True}, "managedNodeGroups": {"taints": True}},
    "RuntimeClass": {**_NAMED, "handler": True},
    "KubeletConfiguration": {**_OBJECT, "cgroupDriver": True},
    "NVIDIADriver": {**_NAMED, "spec": {"version": True}},
    "DaemonSet": {**_NAMED, "spec": {"template": {"spec": _POD}}},
    "Pod": {**_NAMED, "spec": _POD},
    "ResourceClaimTemplate": {**_NAMED, "spec": {"spec": _CLAIM}},
    "ResourceClaim": {**_NAMED, "spec": _CLAIM},
    "DeviceClass": {**_NAMED, "spec": {"selectors": True}},
    "ComputeDomain": {**_OBJECT, "spec": {"channel": {"resourceClaimTemplate": {"name": True}}}},
}


def consulted(obj: Node) -> Node:
    """What other files' checks read of a kept object: a copy with only that, or the object
    itself (a kind not in SPECS, or a `kind` that is no plain string)."""
    kind = obj.get("kind") if obj.is_map else None
    spec = SPECS.get(kind.value) if kind is not None and type(kind.value) is str else None
    return obj if spec is None else _pruned(obj, spec)


def _pruned(node: Node, spec) -> Node:
    if spec is True:
        return node
    value = node.value
    if type(value) is dict:
        value = {key: _pruned(child, spec[key]) for key, child in value.items() if key in spec}
    elif type(value) is list:
        value = [_pruned(item, spec) for item in value]
    else:
        return node
    return Node(value, node._span, node._key_span, node.tag, node.quoted, node._index)
