"""What dev container definitions tell other files' checks: the Dockerfiles they build
(dev images, made to compile in), and the images they run with GPUs and the CUDA the
`nvidia-cuda` Feature adds to one without its own."""

from __future__ import annotations

from gpulint.kinds.devcontainer.facts import (
    CudaFeature,
    cuda_feature,
    dockerfile,
    gpu_request,
    image,
    string_span,
)
from gpulint.knowledge.images import cuda_image, tag_cuda
from gpulint.model import Document, Span


def built_dockerfiles(ctx) -> frozenset[str]:
    """The absolute paths of the Dockerfiles the linted devcontainer.json files build."""
    found = (dockerfile(doc) for doc in ctx.of_kind("devcontainer"))
    return frozenset(built[0] for built in found if built is not None)


def gpu_devcontainer(doc: Document) -> tuple[tuple[str, Span] | None, tuple[str, Span] | None]:
    """(the image it runs, the Dockerfile it builds), each with where it is named, of a dev
    container that asks for GPUs; (None, None) for one that does not."""
    if doc.kind != "devcontainer" or gpu_request(doc) is None:
        return None, None
    node, built = image(doc), dockerfile(doc)
    return ((node.value.strip(), string_span(doc, node)[0]) if node is not None else None,
            (built[0], string_span(doc, built[1])[0]) if built is not None else None)


def gpu_feature_cuda(doc: Document) -> CudaFeature | None:
    """The `nvidia-cuda` Feature of a dev container that asks for GPUs and runs an image
    with no CUDA gpulint knows of: the Feature's CUDA is then the container's."""
    if doc.kind != "devcontainer" or gpu_request(doc) is None or dockerfile(doc) is not None:
        return None
    node = image(doc)
    ref = node.value.strip() if node is not None else ""
    if ref and (cuda_image(ref) or tag_cuda(ref)) is not None:
        return None
    return cuda_feature(doc)
