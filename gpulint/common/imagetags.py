"""An image named where it runs (a Dockerfile `FROM`, a Compose `image:`, a `docker run`
line, a pod's `image:`) judged with the image knowledge: the GL301/GL302 tag verdicts.
"""

from __future__ import annotations

import re

from gpulint.knowledge.images import cuda_image, parse_image_ref, tag_status
from gpulint.model import Document, Edit, Finding, Fix, Span
from gpulint.registry import finding


def tag_advice(doc: Document, ref, better: str | None, span: Span, editable: bool):
    """The sentence that names the tag to use instead, and an unsafe fix that writes it
    when the file names the tag literally. A move to another CUDA major gets no fix:
    everything the image installs for the old major has to move with it."""
    if better is None:
        return "", None
    old, new = cuda_image(ref), cuda_image(better)
    if old is not None and new is not None and old.cuda_major_minor[0] != new.cuda_major_minor[0]:
        return (f" The supported successor is `{better}`, a new CUDA major: move what the image "
                f"installs for CUDA {old.cuda_major_minor[0]} along with it."), None
    fix = None
    if editable and not ref.digest:
        fix = Fix(f"use {better}", (Edit(doc.abspath, *doc.index.offsets(span), better),),
                  safe=False)
    return f" Use `{better}`.", fix


def tag_finding(doc: Document, span: Span, shown: str, status, advice: str, fix) -> Finding:
    """GL301 or GL302 for a tag whose status is not `supported`/`unknown`."""
    if status.status == "eol":
        return finding(doc, "GL302", span, f"{shown} is end of life, may be deleted: "
                       f"{status.reason}{advice}", fix=fix)
    if status.platform:
        return finding(doc, "GL301", span, f"{shown} has no linux/{status.platform} image, so "
                       f"pulling it for `--platform` fails with `no matching manifest for "
                       f"linux/{status.platform} in the manifest list entries`: "
                       f"{status.reason}{advice}", fix=fix)
    verb = "was removed" if status.status == "removed" else "never existed"
    return finding(doc, "GL301", span, f"{shown} {verb}, so pulling it fails with "
                   f"`manifest unknown`: {status.reason}{advice}", fix=fix)


def image_tag_findings(doc: Document, image: str, span: Span, editable: bool,
                       shown: str | None = None, platform: str | None = None):
    """GL301/GL302 for an image reference written at `span`."""
    ref = parse_image_ref(image)
    status = tag_status(ref, platform) if ref is not None else None
    if status is None or status.status in ("supported", "unknown"):
        return
    if status.status == "never-existed" and is_placeholder_tag(ref.tag):
        return
    better = ref.with_tag(status.suggestion, status.repository) if status.suggestion else None
    advice, fix = tag_advice(doc, ref, better, span, editable)
    yield tag_finding(doc, span, shown or f"`{image}`", status, advice, fix)


def is_placeholder_tag(tag: str | None) -> bool:
    """A tag written as a stand-in for the reader to fill (`<version>`, `{tag}`, `TAG`,
    `x.y.z-base`), as documentation does; `latest` and real-looking tags are not."""
    if not tag or tag == "latest":
        return False
    version = tag.split("-")[0]
    return bool(re.search(r"[<>{}\[\]]|\.\.\.", tag)) or re.fullmatch(r"[A-Z][A-Z0-9_]*", tag) is not None \
        or re.fullmatch(r"[a-zA-Z]+(\.[a-zA-Z]+)+", version) is not None
