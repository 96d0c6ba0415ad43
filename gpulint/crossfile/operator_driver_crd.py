"""GL487: NVIDIADriver objects in a linted set whose ClusterPolicy (or chart values) does
not hand the driver to them (`driver.useNvidiaDriverCRD`). GL494: chart values (or a helm
line) that hand the driver to NVIDIADriver objects, create none (`deployDefaultCR: false`),
and keep the operator's driver (`driver.enabled`), in a linted set that defines none."""

from __future__ import annotations

from gpulint.kinds.commands.helm import CACHE
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


# ---------------------------------------------------------------- GL494

_CRD = "driver.nvidiaDriverCRD.enabled"
_DEFAULT_CR = "driver.nvidiaDriverCRD.deployDefaultCR"


def _linted_drivers(ctx: Context) -> bool:
    return ctx.memo("operator.nvidiadrivers", lambda: any(
        object_kind(obj) == "NVIDIADriver" and _nvidia(obj)
        for doc in ctx.of_kind("kubernetes") for obj in doc.tree or ()))


def _no_driver_message(words: str) -> str:
    return (f"{words}: the chart creates no NVIDIADriver, while the ClusterPolicy it renders hands the driver "
            f"to NVIDIADriver objects (`useNvidiaDriverCRD: true`, so the operator skips its own driver "
            f"DaemonSet), and none of the linted files defines one: until one is created no node gets a "
            f"driver from the operator, and with `driver.enabled` (not pre-installed drivers) the validator "
            f"keeps waiting for the driver container, holding back the toolkit and the device plugin; define "
            f"an NVIDIADriver, or leave `deployDefaultCR` true")


@check("GL494", kinds=("gpu-operator-values",))
def values_create_no_nvidiadriver(doc: Document, ctx: Context):
    root = doc.tree
    if root is None or not root.is_map:
        return
    crd, default_cr = root.get(*_CRD.split(".")), root.get(*_DEFAULT_CR.split("."))
    # `driver.enabled: false` means drivers pre-installed on the hosts: none is wanted
    if scalar_str(crd) != "true" or scalar_str(default_cr) != "false" \
            or scalar_str(root.get("driver", "enabled")) == "false" or _linted_drivers(ctx):
        return
    yield finding(doc, "GL494", default_cr.span, _no_driver_message(
        "`deployDefaultCR: false` with `nvidiaDriverCRD.enabled: true`"),
                  related=[related(doc, crd, "`driver.nvidiaDriverCRD.enabled: true`")])


@check("GL494", kinds=("commands",))
def helm_creates_no_nvidiadriver(doc: Document, ctx: Context):
    for command in doc.cache.get(CACHE, ()):
        crd, default_cr = command.setting(_CRD), command.setting(_DEFAULT_CR)
        driver = command.setting("driver.enabled")
        if command.chart != "gpu-operator" or command.values_files or crd is None or default_cr is None \
                or crd.value != "true" or default_cr.value != "false" \
                or (driver is not None and driver.value != "true") or _linted_drivers(ctx):
            continue
        where = doc.index.span(default_cr.start, default_cr.start + len(default_cr.key))
        yield finding(doc, "GL494", where, _no_driver_message(
            f"`--set {_DEFAULT_CR}=false` with `{_CRD}=true`"))
