"""What a dev container definition says: the image it runs or the Dockerfile it builds,
and whether it asks for GPUs.

The Dockerfile is `build.dockerfile` (or the older top-level `dockerFile`), relative to
the devcontainer.json; a definition that starts Compose services (`dockerComposeFile`)
names neither here. The `nvidia-cuda` Feature (ghcr.io/devcontainers/features/nvidia-cuda)
installs NVIDIA's CUDA libraries of its `cudaVersion` into whatever image it is added to.
"""

from __future__ import annotations

import os

from gpulint.model import Document, Node, Span
from gpulint.numbers import whole
from gpulint.record import Frozen, freeze
from gpulint.regex import lazy


def image(doc: Document) -> Node | None:
    """The `image` string node."""
    node = doc.tree.get("image") if doc.tree is not None else None
    return node if node is not None and node.tag == "str" and node.value.strip() else None


def dockerfile(doc: Document) -> tuple[str, Node] | None:
    """(absolute path, the node naming it) of the Dockerfile the dev container builds."""
    tree = doc.tree
    if tree is None:
        return None
    build = tree.get("build")
    node = build.get("dockerfile") if build is not None and build.is_map else None
    node = node if node is not None else tree.get("dockerFile")
    if node is None or node.tag != "str" or not node.value.strip():
        return None
    return os.path.normpath(os.path.join(os.path.dirname(doc.abspath), node.value)), node


def build_args(doc: Document) -> set[str]:
    """The names `build.args` gives values, which replace the Dockerfile's ARG defaults."""
    args = doc.tree.get("build", "args") if doc.tree is not None else None
    return {name for name, _ in args.items()} if args is not None else set()


def gpu_request(doc: Document) -> Node | None:
    """What asks for GPUs: `--gpus` in `runArgs` (`--gpus=all`, `--gpus all`), or
    `hostRequirements.gpu` (true, "optional" or an object of GPU needs)."""
    tree = doc.tree
    if tree is None:
        return None
    args = tree.get("runArgs")
    for item in args.value if args is not None and args.is_seq else ():
        if item.tag == "str" and item.value.split("=", 1)[0] == "--gpus":
            return item
    needs = tree.get("hostRequirements")
    gpu = needs.get("gpu") if needs is not None and needs.is_map else None
    if gpu is not None and (gpu.value is True or gpu.value == "optional" or gpu.is_map):
        return gpu
    return None


def string_span(doc: Document, node: Node) -> tuple[Span, bool]:
    """Where a string's text is, without its quotes, and whether it is written out as it
    reads (no escapes), so a fix may rewrite it; the quoted string's span otherwise."""
    start, end = doc.index.offsets(node.span)
    if doc.text[start + 1:end - 1] == node.value:
        return doc.index.span(start + 1, end - 1), True
    return node.span, False


# ghcr.io/devcontainers/features/nvidia-cuda, with a tag or digest, or a local copy of it
_CUDA_FEATURE = lazy(r"(?:^|/)nvidia-cuda(?:[:@][\w.:-]+)?$")
_FEATURE_VERSION = lazy(r"(\d+)\.(\d+)$")
# The Feature's `cudaVersion` when none is given (its devcontainer-feature.json).
FEATURE_DEFAULT_CUDA = "11.8"


class CudaFeature(Frozen):
    """The `nvidia-cuda` Feature: it installs `cuda-libraries-X-Y` (and with
    `installToolkit`, `cuda-toolkit-X-Y`) from NVIDIA's repository."""

    __slots__ = ("node", "version", "major_minor", "toolkit", "stated")

    node: Node  # the Feature's entry (its key is where it is named)
    version: str  # "11.8"
    major_minor: tuple[int, int]
    toolkit: bool
    stated: bool  # `cudaVersion` is written (not the Feature's default)

    def __init__(self, node: Node, version: str, major_minor: tuple[int, int], toolkit: bool, stated: bool) -> None:
        freeze(self, node, version, major_minor, toolkit, stated)


def cuda_feature(doc: Document) -> CudaFeature | None:
    features = doc.tree.get("features") if doc.tree is not None else None
    for name, node in features.items() if features is not None else ():
        if not _CUDA_FEATURE.search(name.strip()):
            continue
        options = node if node.is_map else None
        asked = options.get("cudaVersion") if options is not None else None
        version = str(asked.value).strip() if asked is not None and asked.is_scalar else FEATURE_DEFAULT_CUDA
        match = _FEATURE_VERSION.match(version)
        if match is None:
            return None
        toolkit = options.get("installToolkit") if options is not None else None
        return CudaFeature(node, version, (whole(match[1]), whole(match[2])),
                           toolkit is not None and toolkit.value in (True, "true"), asked is not None)
    return None
