"""devcontainer.json checks: the CUDA image tag a dev container runs (GL301, GL302), and
a second CUDA the `nvidia-cuda` Feature adds to a CUDA image (GL306).

The CUDA-vs-driver checks of the image it runs or builds (GL601, GL603, GL604) join it to
the node's driver in gpulint.crossfile.compat; the Dockerfile it builds is judged as a
Dockerfile, as one that exists to compile (no GL303).
"""

from __future__ import annotations

from gpulint.common.imagetags import image_tag_findings
from gpulint.kinds.devcontainer.facts import (
    FEATURE_DEFAULT_CUDA,
    cuda_feature,
    image,
    string_span,
)
from gpulint.knowledge.images import cuda_image
from gpulint.model import Document
from gpulint.registry import Context, check, finding

KINDS = ("devcontainer",)


@check("GL301", "GL302", kinds=KINDS)
def cuda_tags(doc: Document, ctx: Context):
    node = image(doc)
    if node is None:
        return
    span, plain = string_span(doc, node)
    yield from image_tag_findings(doc, node.value.strip(), span, editable=plain)


@check("GL306", kinds=KINDS)
def second_cuda(doc: Document, ctx: Context):
    node, feature = image(doc), cuda_feature(doc)
    img = cuda_image(node.value.strip()) if node is not None and feature is not None else None
    if img is None or img.cuda_major_minor == feature.major_minor:
        return
    version = "`cudaVersion` " + (f"{feature.version}" if feature.stated else
                                  f"unset, so the Feature's default {FEATURE_DEFAULT_CUDA}")
    what = "libraries and toolkit" if feature.toolkit else "libraries"
    x, y = img.cuda_major_minor
    yield finding(doc, "GL306", feature.node.key_span or feature.node.span,
                  f"the `nvidia-cuda` Feature installs the CUDA {feature.version} {what} ({version}) "
                  f"into the CUDA {img.cuda} image `{node.value.strip()}`: two CUDAs end up in the "
                  f"container and which `libcudart` (and `nvcc`) wins depends on the linker cache and "
                  f"PATH; the image already has CUDA: remove the Feature, or set `cudaVersion` to "
                  f"\"{x}.{y}\"", severity="warning")
