"""devcontainer.json checks: the CUDA image tag a dev container runs (GL301, GL302).

The CUDA-vs-driver checks of the image it runs or builds (GL601, GL603, GL604) join it to
the node's driver in gpulint.crossfile.compat; the Dockerfile it builds is judged as a
Dockerfile, as one that exists to compile (no GL303).
"""

from __future__ import annotations

from gpulint.common.imagetags import image_tag_findings
from gpulint.kinds.devcontainer.facts import image, string_span
from gpulint.model import Document
from gpulint.registry import Context, check

KINDS = ("devcontainer",)


@check("GL301", "GL302", kinds=KINDS)
def cuda_tags(doc: Document, ctx: Context):
    node = image(doc)
    if node is None:
        return
    span, plain = string_span(doc, node)
    yield from image_tag_findings(doc, node.value.strip(), span, editable=plain)
