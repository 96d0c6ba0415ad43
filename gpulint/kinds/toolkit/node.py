"""Which daemon configs share a node with a toolkit config, by the node's file tree."""

from __future__ import annotations

from gpulint.model import Document


def same_node(doc: Document, config) -> bool:
    """The toolkit config and a daemon's config in one node's file tree:
    <root>/etc/nvidia-container-runtime/config.toml beside <root>/etc/docker or /etc/containerd."""
    here = doc.abspath.replace("\\", "/")
    suffix = "etc/nvidia-container-runtime/config.toml"
    if not here.endswith("/" + suffix):
        return False
    root = here[: -len(suffix)]
    there = config.doc.abspath.replace("\\", "/")
    return there.startswith((root + "etc/docker/", root + "etc/containerd/"))
