"""What the NVIDIA device plugin reads from its config file (rules/device-plugin.yaml): the
keys of each table with their types and releases, the values its flags accept, and the
rules for resource names."""

from __future__ import annotations

import functools

from gpulint.resources import load_yaml


@functools.lru_cache(maxsize=1)
def data() -> dict:
    return load_yaml("device-plugin.yaml")


def table(path: str) -> dict | None:
    """The table at a dotted path (`sharing.mps.resources`), with `same:` followed."""
    found = data()["tables"].get(path)
    while found is not None and "same" in found:
        found = data()["tables"][found["same"]]
    return found


def tables() -> dict[str, dict]:
    return {path: table(path) for path in data()["tables"]}


def allowed_values(path: str) -> dict | None:
    """The values the plugin accepts for the key at `path`, and its message for others."""
    return data()["values"].get(path)


def chart_values() -> dict[str, dict]:
    """The device plugin chart's values that become the plugin's environment: the YAML
    type its template passes, the variable, the config key whose values it takes."""
    return data()["chart_values"]


def resource_names() -> dict:
    return data()["resource_names"]


def set_aside(key: str) -> str:
    """The warning the plugin logs when it sets a key it read aside (`rename`, `devices`,
    `resources`)."""
    return data()["set_aside"][key]
