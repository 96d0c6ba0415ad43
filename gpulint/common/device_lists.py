"""How the device plugin hands GPUs to containers (its `DEVICE_LIST_STRATEGY`) against the
ways the NVIDIA Container Toolkit accepts (its `ACCEPT_NVIDIA_VISIBLE_DEVICES_*` settings),
as the GPU Operator's `devicePlugin.env` and `toolkit.env` set them (GL814)."""

from __future__ import annotations

from typing import Any

ENVVAR_UNPRIVILEGED = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"
VOLUME_MOUNTS = "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"
STRATEGY = "DEVICE_LIST_STRATEGY"
# the first GPU Operator release whose chart enables CDI by default; under CDI the operator
# hands devices to containers through CDI, not through the variable or the volume mounts
CDI_DEFAULT_FROM = (25, 10)

Env = dict[str, tuple[str, Any]]  # name -> (value lower-cased, where it is written)


def mismatch(toolkit: Env, plugin: Env, fix_where: str) -> tuple[Any, str] | None:
    """Where the two disagree and the words for it; None when the plugin's way is one the
    toolkit reads. `fix_where` says how the user sets a device plugin variable."""
    strategy = plugin.get(STRATEGY, ("envvar", None))[0]
    strategies = {part.strip() for part in strategy.split(",")}
    refused = toolkit.get(ENVVAR_UNPRIVILEGED)
    if refused is not None and refused[0] == "false" and strategies == {"envvar"}:
        said = "is envvar" if STRATEGY in plugin else "defaults to envvar"
        return refused[1], (
            f"the toolkit is told to ignore `NVIDIA_VISIBLE_DEVICES` in unprivileged containers, but "
            f"the device plugin hands GPUs to containers through that variable (`{STRATEGY}` {said}): "
            f"every unprivileged GPU pod starts without its GPUs or the driver (`CUDA driver version is "
            f"insufficient`); set `{STRATEGY}=volume-mounts` {fix_where}")
    accepted = toolkit.get(VOLUME_MOUNTS)
    if "volume-mounts" in strategies and (accepted is None or accepted[0] != "true"):
        return plugin[STRATEGY][1], (
            f"the device plugin hands GPUs to containers as volume mounts, but the toolkit reads them "
            f"only with `{VOLUME_MOUNTS}=true` (the default is false): GPU pods start without their GPUs")
    return None
