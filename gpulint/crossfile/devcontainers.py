"""What dev container definitions tell other files' checks: the Dockerfiles they build
(dev images, made to compile in), and the images they run with GPUs."""

from __future__ import annotations

from gpulint.kinds.devcontainer.facts import dockerfile, gpu_request, image, string_span
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
