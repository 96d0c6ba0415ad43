"""The device plugin releases the linted manifests run: the tags of their
`k8s-device-plugin` images. A config key newer than every one of them is dropped."""

from __future__ import annotations

from gpulint.kinds.kubernetes.facts import pod_specs
from gpulint.regex import lazy
from gpulint.registry import Context

_PLUGIN_IMAGE = lazy(r"(?:^|/)k8s-device-plugin:v?(\d+)\.(\d+)\.(\d+)")


def plugin_releases(ctx: Context) -> list[tuple[int, int, int]]:
    """The releases of the device plugin images the linted manifests run, oldest first."""
    found = set()
    for doc in ctx.of_kind("kubernetes"):
        for pod in pod_specs(doc):
            for container in pod.containers:
                match = _PLUGIN_IMAGE.search(container.image or "")
                if match is not None:
                    found.add(tuple(int(part) for part in match.groups()))
    return sorted(found)
