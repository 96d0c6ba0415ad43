"""Which daemon configs share a node with a toolkit config, by the node's file tree."""

from __future__ import annotations

from gpulint.model import Document

_SUFFIX = "etc/nvidia-container-runtime/config.toml"


def node_configs_of(doc: Document, configs) -> list:
    """The daemon configs in the node file tree of the toolkit config `doc`:
    <root>/etc/nvidia-container-runtime/config.toml beside <root>/etc/docker or /etc/containerd
    (none for a toolkit config elsewhere: asked once, not once per config)."""
    here = doc.abspath.replace("\\", "/")
    if not here.endswith("/" + _SUFFIX):
        return []
    root = here[: -len(_SUFFIX)]
    daemons = (root + "etc/docker/", root + "etc/containerd/")
    return [c for c in configs if c.doc.abspath.replace("\\", "/").startswith(daemons)]
