"""The GPU Operator chart's values: a top-level `driver` table beside its other components,
or (a file that overrides a few of them) two of the components only this chart has."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_OPERATOR_DRIVER = lazy(r"^driver:\s*(#.*)?$", re.MULTILINE)
_OPERATOR_PARTS = lazy(
    r"^(operator|toolkit|devicePlugin|dcgmExporter|dcgm|gfd|migManager|validator|nfd|mig"
    r"|vgpuManager|sandboxDevicePlugin|nodeStatusExporter|cdi|psa|daemonsets):\s*(#.*)?$",
    re.MULTILINE)

# top-level keys of the gpu-operator chart that no other chart's values are known to share
# (the device plugin chart has `gfd` and `nfd`, many charts `operator` and `driver`)
_ONLY_NAMES = ("toolkit", "devicePlugin", "dcgmExporter", "migManager", "nodeStatusExporter", "vgpuManager",
               "vgpuDeviceManager", "sandboxDevicePlugin", "kataManager", "vfioManager", "ccManager",
               "sandboxWorkloads")
_OPERATOR_ONLY = lazy(rf"^({'|'.join(_ONLY_NAMES)}):\s*(#.*)?$", re.MULTILINE)
# every one of those names with its colon holds one of these: a text without them holds none
# of the names, and five looks for them cost less than twelve for the names
ONLY_PARTS = ("Manager:", "Plugin:", "Exporter:", "toolkit:", "sandboxWorkloads:")


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower):
        return None
    # every YAML file is asked: the literals the patterns need, looked for first, rule out most
    if "driver:" in text and _OPERATOR_DRIVER.search(text) \
            and len({m[1] for m in _OPERATOR_PARTS.finditer(text)}) >= 2:
        return True
    if any(part in text for part in ONLY_PARTS) and sum(name + ":" in text for name in _ONLY_NAMES) >= 2 \
            and len({m[1] for m in _OPERATOR_ONLY.finditer(text)}) >= 2:
        return True
    return None
