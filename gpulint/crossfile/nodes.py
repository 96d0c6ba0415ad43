"""The node model across files: the runtimes of each node config (containerd with its
drop-ins merged, and daemon.json) and kubelet's cgroup driver from the linted
KubeletConfiguration. Kinds' checks reach these through `ctx.fact(...)`."""

from __future__ import annotations

from gpulint.common.runtimes import NodeConfig
from gpulint.crossfile.units import dockerd_nodes
from gpulint.kinds.containerd.facts import containerd_nodes
from gpulint.kinds.kubernetes.facts import object_kind, scalar_str
from gpulint.model import Document, Node
from gpulint.record import Record


def node_configs(ctx) -> list[NodeConfig]:
    """One NodeConfig per main containerd config (drop-ins merged) and per daemon.json
    (with the runtimes its node's systemd unit gives dockerd on the command line), and one
    per unit that gives dockerd runtimes without a linted daemon.json."""
    if "node_configs" not in ctx.cache:
        ctx.cache["node_configs"] = containerd_nodes(ctx) + dockerd_nodes(ctx)
    return ctx.cache["node_configs"]


class KubeletDriver(Record):
    __slots__ = ("driver", "doc", "node")

    driver: str  # "systemd" | "cgroupfs"
    doc: Document
    node: Node  # the cgroupDriver value, else the KubeletConfiguration object

    def __init__(self, driver: str, doc: Document, node: Node) -> None:
        self.driver = driver
        self.doc = doc
        self.node = node


def kubelet_cgroup_driver(ctx) -> KubeletDriver | None:
    """The cgroup driver of the KubeletConfiguration(s) among the linted files, when they
    all say the same. Without `cgroupDriver` kubeadm writes systemd (since 1.22), so an
    unset value counts only beside a kubeadm object; a template expression leaves it
    open."""
    if "kubelet-driver" in ctx.cache:
        return ctx.cache["kubelet-driver"]
    found: list[KubeletDriver | None] = []
    for doc in ctx.of_kind("kubernetes"):
        objects = [o for o in doc.tree or () if o is not None and o.is_map]
        kubeadm = any((scalar_str(o.get("apiVersion")) or "").startswith("kubeadm.k8s.io/") for o in objects)
        for obj in objects:
            if object_kind(obj) != "KubeletConfiguration":
                continue
            value = obj.get("cgroupDriver")
            driver = scalar_str(value)
            if value is None:
                found.append(KubeletDriver("systemd", doc, obj) if kubeadm else None)
            else:
                found.append(KubeletDriver(driver, doc, value) if driver in ("systemd", "cgroupfs") else None)
    known = {f.driver for f in found if f is not None}
    result = found[0] if found and None not in found and len(known) == 1 else None
    ctx.cache["kubelet-driver"] = result
    return result
