"""containerd's config.toml and its drop-ins (Talos merges CRI fragments named *.part):
a TOML file with containerd's tables or top-level keys, or any TOML file in a folder named
`containerd` (`/etc/containerd/config.toml`, even empty or holding only `version = 2`)."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_CONTAINERD_TABLE = lazy(
    r"^\s*\[+\s*(?:plugins|grpc|ttrpc|debug|metrics|cgroup|proxy_plugins|stream_processors"
    r"|timeouts|server)\b", re.MULTILINE)
_CONTAINERD_KEY = lazy(
    r"^\s*(?:imports|disabled_plugins|required_plugins|oom_score|plugin_dir)\s*=", re.MULTILINE)


def by_folder(folder: str, lower: str) -> bool:
    return folder == "containerd" and lower.endswith(".toml")


def wants(lower: str) -> bool:
    return lower.endswith((".toml", ".part"))


def by_content(lower: str, text: str) -> bool | None:
    if wants(lower) and (_CONTAINERD_TABLE.search(text) or _CONTAINERD_KEY.search(text)):
        return True
    return None
