"""The NVIDIA DRA driver chart's values (`nvidia-dra-driver-gpu`, now `dra-driver-nvidia-gpu`):
`resources.gpus` / `resources.computeDomains` switches, or the kubelet plugin's settings beside
the chart's own top-level keys."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_RESOURCES = lazy(r"^resources:\s*(#.*)?$", re.MULTILINE)
_COMPUTE_DOMAINS = lazy(r"^[ \t]+computeDomains:", re.MULTILINE)
_KUBELET_PLUGIN = lazy(r"^kubeletPlugin:\s*(#.*)?$", re.MULTILINE)
# a key no other chart is known to have (what an override file that turns on GPUs writes)
_OWN_KEY = lazy(r"^gpuResourcesEnabledOverride:", re.MULTILINE)
_CHART_KEYS = lazy(r"^(featureGates|gpuResourcesEnabledOverride|nvidiaDriverRoot|resourceApiVersion):",
                   re.MULTILINE)


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower):
        return None
    # every YAML file is asked: the literals the patterns need, looked for first, rule out most
    if "gpuResourcesEnabledOverride:" in text and _OWN_KEY.search(text):
        return True
    if "computeDomains:" in text and _RESOURCES.search(text) and _COMPUTE_DOMAINS.search(text):
        return True
    if "kubeletPlugin:" in text and _KUBELET_PLUGIN.search(text) and _CHART_KEYS.search(text):
        return True
    return None
