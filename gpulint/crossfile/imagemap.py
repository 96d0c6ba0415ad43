"""Which Dockerfile builds an image: `[tool.gpulint.images]` maps image names built in
the repository to their Dockerfiles, so a pod's image is judged by what builds it."""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.model import Document


def mapped_dockerfile(ctx, ref: str) -> Document | None:
    """The Dockerfile `[tool.gpulint.images]` says builds `ref` (read when not linted)."""
    # the image catalog: only when an image is judged (imported by every run)
    from gpulint.knowledge.images import parse_image_ref

    wanted = parse_image_ref(ref)
    images = getattr(ctx.settings, "images", None) or {}
    if wanted is None or not isinstance(images, dict):
        return None
    for name, dockerfile in images.items():
        mapped = parse_image_ref(str(name))
        if mapped is not None and (mapped.registry, mapped.repository) == (wanted.registry, wanted.repository):
            return _dockerfile_document(ctx, Path(ctx.settings.base) / str(dockerfile))
    return None


def mapped_paths(settings) -> set[str]:
    """The absolute paths of the Dockerfiles `[tool.gpulint.images]` names."""
    images = getattr(settings, "images", None) or {}
    if not isinstance(images, dict):
        return set()
    return {os.path.abspath(Path(settings.base) / str(path)) for path in images.values()}


def dockerfile_at(ctx, path: Path) -> Document | None:
    """The Dockerfile at `path`: the linted one, or read and parsed (None: none there)."""
    return _dockerfile_document(ctx, path)


def _dockerfile_document(ctx, path: Path) -> Document | None:
    # reading a mapped Dockerfile outside the linted set: rare
    from gpulint.formats.documents import read
    from gpulint.kinds.dockerfile.parse import parse

    target = os.path.abspath(path)
    for doc in ctx.of_kind("dockerfile"):
        if doc.abspath == target:
            return doc
    key = f"imagemap:{target}"
    if key not in ctx.cache:
        ctx.cache[key] = read(path, "dockerfile", parse) if path.is_file() else None
    return ctx.cache[key]


def replaces_arg_default(arg_names: set[str], dockerfile_doc: Document) -> bool:
    """Whether build arguments given by name (`build.args` of a Compose service or a dev
    container) replace a global ARG of the Dockerfile they build: the CUDA of its FROM may
    then be another than the defaults say."""
    tree = dockerfile_doc.tree
    return tree is not None and bool(arg_names & set(tree.global_args))
