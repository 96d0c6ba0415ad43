"""The NVIDIA Container Toolkit's config.toml (its packaging ships one per distribution:
`config.toml.debian`, `config.toml.rpm-yum`) and CDI specs."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_TOOLKIT_TABLE = lazy(
    r"^\s*\[\s*(?:nvidia-container-cli|nvidia-container-runtime|nvidia-ctk)\s*[\].]", re.MULTILINE)
_TOOLKIT_VARIANT = lazy(r"\.toml\.[a-z0-9_-]+$")
_CDI_VERSION = lazy(r"^[\"']?cdiVersion[\"']?\s*:", re.MULTILINE)


def toolkit_wants(lower: str) -> bool:
    return lower.endswith((".toml", ".part")) or bool(_TOOLKIT_VARIANT.search(lower))


def toolkit_by_content(lower: str, text: str) -> bool | None:
    if _TOOLKIT_VARIANT.search(lower):
        return bool(_TOOLKIT_TABLE.search(text))
    if lower.endswith((".toml", ".part")) and _TOOLKIT_TABLE.search(text):
        return True
    return None


def cdi_wants(lower: str) -> bool:
    return lower.endswith((".json", ".yaml", ".yml"))


def cdi_by_content(lower: str, text: str) -> bool | None:
    if lower.endswith(".json"):
        return True if text.lstrip("\ufeff \t\r\n").startswith("{") and '"cdiVersion"' in text else None
    if lower.endswith((".yaml", ".yml")) and "cdiVersion" in text and _CDI_VERSION.search(text):
        return True
    return None
