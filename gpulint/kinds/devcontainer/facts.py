"""What a dev container definition says: the image it runs or the Dockerfile it builds,
and whether it asks for GPUs.

The Dockerfile is `build.dockerfile` (or the older top-level `dockerFile`), relative to
the devcontainer.json; a definition that starts Compose services (`dockerComposeFile`)
names neither here.
"""

from __future__ import annotations

import os

from gpulint.model import Document, Node, Span


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
