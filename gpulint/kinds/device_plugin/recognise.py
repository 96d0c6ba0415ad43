"""A device plugin config: `version: v1` beside `flags:` or `sharing:`, written on its own or
as the text of a ConfigMap's (or the chart's `config.map`) entries."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_VERSION = lazy(r"^([ \t]*)version:[ \t]*[\"']?v1[\"']?[ \t]*(#.*)?$", re.MULTILINE)
_SECTION = lazy(r"^([ \t]*)(flags|sharing):[ \t]*(#.*)?$", re.MULTILINE)
# the same text in a double-quoted YAML string, its line breaks written `\n`
_QUOTED = lazy(r"version:[ \t]*v1\\n(.{0,200}?\\n)?[ \t]*(flags|sharing):\\n")
_TOP_KIND = lazy(r"^kind:\s*[\"']?([A-Za-z]+)", re.MULTILINE)
_TOP_API = lazy(r"^apiVersion:", re.MULTILINE)
_CHART_CONFIG = lazy(r"^config:[ \t]*(#.*)?$", re.MULTILINE)
_CHART_MAP = lazy(r"^[ \t]+map:[ \t]*(#.*)?$", re.MULTILINE)
# the chart's values that become the plugin's environment (rules/device-plugin.yaml chart_values)
_FLAG_NAMES = ("migStrategy", "failOnInitError", "compatWithCPUManager", "deviceListStrategy", "deviceIDStrategy",
               "nvidiaDriverRoot", "nvidiaDevRoot", "gdrcopyEnabled", "gdsEnabled", "mofedEnabled",
               "deviceDiscoveryStrategy")
_CHART_FLAGS = lazy(rf"^({'|'.join(_FLAG_NAMES)}):", re.MULTILINE)
# every flag name with its colon holds one of these: a text without them holds no flag, and
# five looks for them cost half the eleven for the names
FLAG_PARTS = ("Strategy:", "Enabled:", "Root:", "failOnInitError:", "compatWithCPUManager:")


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def _looks_like_config(text: str) -> bool:
    # every YAML file is asked: the literals the patterns need, looked for first, rule out most
    if "version:" not in text or ("flags:" not in text and "sharing:" not in text):
        return False
    indents = {m[1] for m in _VERSION.finditer(text)}
    return any(m[1] in indents for m in _SECTION.finditer(text)) or _QUOTED.search(text) is not None


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower):
        return None
    if not _looks_like_config(text):
        # the chart's values without a config: two of its flag values at the top level
        chart = any(part in text for part in FLAG_PARTS) and sum(name + ":" in text for name in _FLAG_NAMES) >= 2 \
            and len({m[1] for m in _CHART_FLAGS.finditer(text)}) >= 2
        return True if chart and not _TOP_API.search(text) and not _TOP_KIND.search(text) else None
    kinds = {m[1] for m in _TOP_KIND.finditer(text)}
    if _TOP_API.search(text):
        # a manifest: only a file of ConfigMaps is this kind's (a DaemonSet beside the
        # ConfigMap keeps the file a Kubernetes manifest, checked as such)
        return True if kinds == {"ConfigMap"} else None
    if kinds:
        return None
    if _VERSION.search(text) and any(m[1] == "" for m in _VERSION.finditer(text)):
        return True
    return True if _CHART_CONFIG.search(text) and _CHART_MAP.search(text) else None
