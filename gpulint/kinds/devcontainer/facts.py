"""What a dev container definition says: the image it runs or the Dockerfile it builds,
whether it asks for GPUs, and the `docker run` flags of its `runArgs`.

The Dockerfile is `build.dockerfile` (or the older top-level `dockerFile`), relative to
the devcontainer.json; a definition that starts Compose services (`dockerComposeFile`)
names neither here. The `nvidia-cuda` Feature (ghcr.io/devcontainers/features/nvidia-cuda)
installs NVIDIA's CUDA libraries of its `cudaVersion` into whatever image it is added to.
"""

from __future__ import annotations

import os

from gpulint.common.containers import FLAGS_WITHOUT_VALUE, SHORT_FLAGS_WITHOUT_VALUE
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


class RunArg(Frozen):
    """A `docker run` flag of `runArgs`: each item is one argument of the docker CLI (no
    shell splits or unquotes it), its value either after `=` or the next item."""

    __slots__ = ("name", "node", "value", "span")

    name: str  # "--gpus", "-e"
    node: Node  # the item naming the flag
    value: str | None  # as the docker CLI receives it
    span: Span | None  # where the value is written (inside the quotes when it can be)

    def __init__(self, name: str, node: Node, value: str | None, span: Span | None) -> None:
        freeze(self, name, node, value, span)


def run_args(doc: Document) -> list[RunArg]:
    """The flags of `runArgs`, in order (items that are neither flags nor their values,
    such as numbers, are passed over)."""
    args = doc.tree.get("runArgs") if doc.tree is not None else None
    items = list(args.value) if args is not None and args.is_seq else []
    found: list[RunArg] = []
    i = 0
    while i < len(items):
        item = items[i]
        text = item.value if item.tag == "str" else ""
        i += 1
        if not text.startswith("-"):
            continue
        name, eq, value = text.partition("=")
        short = not text.startswith("--")
        if short and set(text[1:]) <= SHORT_FLAGS_WITHOUT_VALUE or name in FLAGS_WITHOUT_VALUE and not eq:
            found.append(RunArg(text, item, None, None))  # `--privileged`, `-it`
        elif short and len(text) > 2:
            found.append(RunArg(text[:2], item, text[2:], _tail_span(doc, item, 2)))  # `-eNAME=value`
        elif eq:
            found.append(RunArg(name, item, value, _tail_span(doc, item, len(name) + 1)))  # `--gpus=all`
        else:
            nxt = items[i] if i < len(items) and items[i].tag == "str" else None
            found.append(RunArg(name, item, nxt.value if nxt else None,
                                string_span(doc, nxt)[0] if nxt else None))
            i += 1 if nxt is not None else 0
    return found


def _tail_span(doc: Document, node: Node, skip: int) -> Span:
    """The part of a string after its first `skip` characters, or the whole string where
    escapes make offsets in the value and in the file differ."""
    span, plain = string_span(doc, node)
    if not plain:
        return span
    start, end = doc.index.offsets(span)
    return doc.index.span(start + skip, end)


def run_gpus(doc: Document) -> RunArg | None:
    """The `runArgs` item that hands the container GPUs: `--gpus` (not a count of zero),
    an NVIDIA `--runtime`, or a CDI `--device nvidia.com/gpu=...`."""
    for arg in run_args(doc):
        value = (arg.value or "").strip()
        if arg.name == "--gpus" and value != "0" or arg.name == "--runtime" and value.startswith("nvidia") \
                or arg.name == "--device" and value.startswith("nvidia.com/gpu"):
            return arg
    return None


def host_gpu(doc: Document) -> Node | None:
    """`hostRequirements.gpu` when it asks for a GPU (true, "optional" or an object of GPU
    needs): the devcontainer CLI then adds `--gpus all` where Docker has GPU support."""
    needs = doc.tree.get("hostRequirements") if doc.tree is not None else None
    gpu = needs.get("gpu") if needs is not None and needs.is_map else None
    if gpu is not None and (gpu.value is True or gpu.value == "optional" or gpu.is_map):
        return gpu
    return None


def gpu_request(doc: Document) -> Node | None:
    """What asks for GPUs: a `runArgs` GPU flag, or `hostRequirements.gpu`."""
    if doc.tree is None:
        return None
    arg = run_gpus(doc)
    return arg.node if arg is not None else host_gpu(doc)


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
