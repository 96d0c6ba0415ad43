"""The GPU Operator chart's values: a top-level `driver` table beside its other components."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_OPERATOR_DRIVER = lazy(r"^driver:\s*(#.*)?$", re.MULTILINE)
_OPERATOR_PARTS = lazy(
    r"^(operator|toolkit|devicePlugin|dcgmExporter|dcgm|gfd|migManager|validator|nfd|mig"
    r"|vgpuManager|sandboxDevicePlugin|nodeStatusExporter|cdi|psa|daemonsets):\s*(#.*)?$",
    re.MULTILINE)


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    if wants(lower) and _OPERATOR_DRIVER.search(text) \
            and len({m[1] for m in _OPERATOR_PARTS.finditer(text)}) >= 2:
        return True
    return None
