"""GL487: NVIDIADriver objects in a linted set whose ClusterPolicy (or chart values) does
not hand the driver to them (`driver.useNvidiaDriverCRD`)."""

from __future__ import annotations

from gpulint.kinds.kubernetes.facts import object_kind, object_name, scalar_str
from gpulint.model import Document, Node
from gpulint.registry import Context, check, finding, related


def _nvidia(obj: Node) -> bool:
    return (scalar_str(obj.get("apiVersion")) or "").startswith("nvidia.com/")


def _sources(ctx: Context) -> list[tuple[Document, Node, bool]]:
    """(file, the node that says it, whether the driver is handed to NVIDIADrivers) of every
    ClusterPolicy and GPU Operator values file linted."""
    def compute():
        out = []
        for doc in ctx.of_kind("kubernetes"):
            for obj in doc.tree or ():
                if object_kind(obj) == "ClusterPolicy" and _nvidia(obj):
                    node = obj.get("spec", "driver", "useNvidiaDriverCRD")
                    out.append((doc, node or obj.get("spec", "driver") or obj, scalar_str(node) == "true"))
        for doc in ctx.of_kind("gpu-operator-values"):
            node = doc.tree.get("driver", "nvidiaDriverCRD", "enabled") if doc.tree is not None else None
            out.append((doc, node or (doc.tree.get("driver") if doc.tree is not None else None) or doc.tree,
                        scalar_str(node) == "true"))
        return out
    return ctx.memo("operator.driver-crd", compute)


@check("GL487", kinds=("kubernetes",))
def nvidiadriver_not_used(doc: Document, ctx: Context):
    drivers = [obj for obj in doc.tree or () if object_kind(obj) == "NVIDIADriver" and _nvidia(obj)]
    sources = _sources(ctx) if drivers else []
    # every ClusterPolicy and values file linted keeps the driver: a set with one that hands
    # it over may be another cluster's, and then nothing is certain
    if not sources or any(uses for _, _, uses in sources):
        return
    source_doc, node, _ = sources[0]
    where = "the ClusterPolicy" if source_doc.kind == "kubernetes" else "the GPU Operator chart values"
    key = "`spec.driver.useNvidiaDriverCRD`" if source_doc.kind == "kubernetes" else "`driver.nvidiaDriverCRD.enabled`"
    for obj in drivers:
        yield finding(doc, "GL487", obj.get("kind"),
                      f"NVIDIADriver `{object_name(obj) or 'unnamed'}` while {where} does not set {key} to "
                      f"true: from v26.3 the operator skips it (state `disabled`, \"useNvidiaDriverCRD is not "
                      f"enabled in ClusterPolicy\"), and earlier releases reconcile it without looking and "
                      f"deploy its driver beside the ClusterPolicy's own driver DaemonSet on the same nodes",
                      related=[related(source_doc, node, f"{where} that keeps the driver")])
