"""Compose files: by name (`compose.yaml`, `docker-compose.gpu.yml`, `x.compose.yaml`), or a
top-level `services` mapping whose entries run images."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_COMPOSE_SERVICES = lazy(r"^services:[ \t]*(#.*)?$", re.MULTILINE)
_COMPOSE_SERVICE_KEY = lazy(
    r"^[ \t]+(image|build|deploy|runtime|gpus|extends|devices|container_name|environment|volumes):",
    re.MULTILINE)
_FIRST_ENTRY = lazy(r"\n(?:[ \t]*(?:#.*)?\n)*[ \t]+([^\s#-][^:\n]*):[ \t]*(#.*)?(\n|$)")
_COMPOSE_NAME = lazy(r"^(docker-compose.*|compose(\.[^/]+)?|.*\.compose)\.ya?ml$")


def by_name(lower: str) -> bool:
    return bool(_COMPOSE_NAME.match(lower))


def wants(lower: str) -> bool:
    return lower.endswith((".yaml", ".yml"))


def by_content(lower: str, text: str) -> bool | None:
    return True if wants(lower) and _is_compose(text) else None


def _is_compose(text: str) -> bool:
    """A top-level `services` mapping (not a list, as in GitLab CI) with service keys."""
    # every YAML file is asked: the literal the pattern needs, looked for first, rules out most
    found = _COMPOSE_SERVICES.search(text) if "services:" in text else None
    if found is None or _FIRST_ENTRY.match(text, found.end()) is None:
        return False
    return _COMPOSE_SERVICE_KEY.search(text, found.end()) is not None
