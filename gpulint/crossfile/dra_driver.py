"""What the linted NVIDIA DRA driver chart values switch on: the device classes the chart
creates (`resources.gpus.enabled`, `resources.computeDomains.enabled`) and the driver's
feature gates (`featureGates`), for the Kubernetes DRA checks (`ctx.fact("dra-driver-values")`)."""

from __future__ import annotations

from gpulint.model import Related
from gpulint.record import Frozen, freeze


class DriverValues(Frozen):
    """One values file. disabled: group (`gpus`, `computeDomains`) -> where `enabled: false`
    is written; gates: the feature gates written true, or None when the file has no
    `featureGates` mapping (a chart before v25.8 has none, an override file may leave it out);
    gates_at: where `featureGates` is written."""

    __slots__ = ("disabled", "gates", "gates_at")

    disabled: dict[str, Related]
    gates: frozenset[str] | None
    gates_at: Related | None

    def __init__(self, disabled: dict[str, Related], gates: frozenset[str] | None, gates_at: Related | None) -> None:
        freeze(self, disabled, gates, gates_at)


def driver_values(ctx) -> list[DriverValues]:
    out = []
    for doc in ctx.of_kind("dra-driver-values"):
        root = doc.tree
        if root is None or not root.is_map:
            continue
        disabled = {}
        for group in ("gpus", "computeDomains"):
            enabled = root.get("resources", group, "enabled")
            if enabled is not None and enabled.value is False:
                disabled[group] = Related(doc.path, enabled.span.line, enabled.span.column,
                                          f"`resources.{group}.enabled: false`")
        gates_node = root.get("featureGates")
        gates, gates_at = None, None
        if gates_node is not None and (gates_node.is_map or gates_node.value is None):
            gates = frozenset(name for name, value in gates_node.items() if value.value is True)
            where = gates_node.key_span or gates_node.span
            gates_at = Related(doc.path, where.line, where.column, "the DRA driver's `featureGates`")
        out.append(DriverValues(disabled, gates, gates_at))
    return out
