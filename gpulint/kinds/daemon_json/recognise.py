"""Docker's daemon.json: by its name, or a JSON object with dockerd's options."""

from __future__ import annotations

from gpulint.regex import lazy

_DOCKERD_KEYS = lazy(
    r'"(runtimes|default-runtime|exec-opts|log-driver|log-opts|storage-driver|data-root|graph'
    r'|registry-mirrors|insecure-registries|live-restore|cgroup-parent|default-ulimits'
    r'|node-generic-resources|features|builder|dns|bip|iptables|userns-remap)"\s*:')


def by_name(lower: str) -> bool:
    return lower == "daemon.json" or (lower.endswith(".json") and "daemon" in lower)


def wants(lower: str) -> bool:
    return lower.endswith(".json")


def by_content(lower: str, text: str) -> bool | None:
    if not wants(lower) or not text.lstrip("\ufeff \t\r\n").startswith("{"):
        return None
    keys = set(_DOCKERD_KEYS.findall(text))
    # the runtime keys alone, or two other dockerd options, make a daemon.json
    return True if keys & {"runtimes", "default-runtime"} or len(keys) >= 2 else None
