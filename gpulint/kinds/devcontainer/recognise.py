"""A dev container definition: `.devcontainer/devcontainer.json`, `.devcontainer.json`, or
`.devcontainer/<name>/devcontainer.json`, found by its name alone."""

from __future__ import annotations


def by_name(lower: str) -> bool:
    return lower in ("devcontainer.json", ".devcontainer.json")
