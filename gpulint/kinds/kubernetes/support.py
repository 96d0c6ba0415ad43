"""What the Kubernetes checks share: each container with its label, the GPU quantities
written where the API server does not read them, and text edits on a manifest (a key
added, renamed or moved) that keep its indentation and comments.
"""

from __future__ import annotations

import functools

from gpulint.kinds.kubernetes.facts import (
    Container,
    is_gpu_resource,
    is_kustomize_patch,
    pod_specs,
    scalar_str,
)
from gpulint.knowledge.images import CudaImage, cuda_image
from gpulint.model import Document, Edit, Fix, Node, Span, sequence
from gpulint.registry import Context

# ---------------------------------------------------------------- text edits


def entry_lines(doc: Document, entry: Node) -> tuple[int, int, int] | None:
    """(start, end, indent) of the whole lines of a one-line block-style `key: value`
    entry, or None when it shares a line with anything else (flow style, JSON, `- key:`)."""
    if entry.key_span is None or entry.span.end_line != entry.key_span.line or not entry.is_scalar:
        return None
    index = doc.index
    line_start = index.starts[entry.key_span.line - 1]
    key_start, _ = doc.index.offsets(entry.key_span)
    _, value_end = doc.index.offsets(entry.span)
    if doc.text[line_start:key_start].strip(" "):
        return None
    line_end = doc.text.find("\n", value_end)
    line_end = len(doc.text) if line_end < 0 else line_end
    rest = doc.text[value_end:line_end].strip()
    if rest and not rest.startswith("#"):
        return None
    return line_start, min(line_end + 1, len(doc.text)), key_start - line_start


def entry_text(doc: Document, entry: Node, indent: int) -> str | None:
    """The entry's line, re-indented, ending with a newline."""
    lines = entry_lines(doc, entry)
    if lines is None:
        return None
    start, end, old_indent = lines
    return " " * indent + doc.text[start + old_indent:end].rstrip("\n") + "\n"


def insertion_point(doc: Document, mapping: Node | None) -> tuple[int, int] | None:
    """(offset, indent) of the line holding a block mapping's first entry: where a
    new first entry goes. None for flow mappings, JSON and `- key:` lines."""
    if mapping is None or not mapping.is_map or not mapping.value:
        return None
    first = next(iter(mapping.value.values())).key_span
    if first is None:
        return None
    line_start = doc.index.starts[first.line - 1]
    key_start, _ = doc.index.offsets(first)
    if doc.text[line_start:key_start].strip(" "):
        return None
    return line_start, key_start - line_start


def source_text(doc: Document, node: Node) -> str:
    """A value as written in the file."""
    return doc.text[slice(*doc.index.offsets(node.span))]


def replace_edit(doc: Document, span: Span, text: str, description: str, safe: bool = True) -> Fix:
    start, end = doc.index.offsets(span)
    return Fix(description, (Edit(doc.abspath, start, end, text),), safe)


def no_fix_in_patches(check_fn):
    """Findings in a Kustomize patch come without a fix: rewriting a partial object
    could contradict the base it is merged into."""
    @functools.wraps(check_fn)
    def wrapper(doc: Document, ctx: Context):
        patch = is_kustomize_patch(doc, ctx)
        for found in check_fn(doc, ctx):
            if patch:
                found.fix = None
            yield found
    return wrapper


def containers_of(doc: Document):
    for pod in pod_specs(doc):
        for container in pod.containers:
            yield pod, container


def privilege(container: Container) -> Node | None:
    """The `privileged: true` or `SYS_ADMIN` capability node of a container: what puts
    CAP_SYS_ADMIN in its bounding set, the NVIDIA runtime's test of a privileged container."""
    context = container.node.get("securityContext")
    if context is None:
        return None
    privileged = context.get("privileged")
    if privileged is not None and privileged.value is True:
        return privileged
    added = context.get("capabilities", "add")
    for item in sequence(added):
        if (scalar_str(item) or "").upper() in ("SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"):
            return item
    return None


def container_label(container: Container) -> str:
    name = f"`{container.name}`" if container.name else "(unnamed)"
    kind = {"containers": "container", "initContainers": "init container",
            "ephemeralContainers": "ephemeral container"}[container.section]
    return f"{kind} {name}"

def rename_key(doc: Document, mapping: Node | None, span: Span, old: str, new: str,
                safe: bool = True) -> Fix | None:
    """Rename the key `old` written at `span` to `new`; None when the mapping already
    has `new` (the rename would write a duplicate key) or the key text is unusual."""
    if mapping is not None and mapping.get(new) is not None:
        return None
    start, end = doc.index.offsets(span)
    key_text = doc.text[start:end]
    if key_text.count(old) != 1:
        return None
    return Fix(f"rename `{old}` to `{new}`", (Edit(doc.abspath, start, end, key_text.replace(old, new)),),
               safe=safe)


OPT_OUT = ("void", "none", "")
def is_cuda_image(image: str | None) -> bool:
    if not image:
        return False
    return container_cuda_image(image) is not None


@functools.lru_cache(maxsize=1024)
def container_cuda_image(image: str) -> CudaImage | None:
    """`cuda_image` of a container's image reference, worked out once per reference: several
    rules ask it of every container."""
    return cuda_image(image)


# Keys users write for `limits` / `requests` that the API does not know.
_RESOURCE_KEYS = {"limit": "limits", "request": "requests", "Limits": "limits", "Requests": "requests",
                  "limitations": "limits", "limts": "limits", "requets": "requests"}


def misplaced_gpu_resources(container: Container) -> list[tuple[Node, str, str | None]]:
    """(the entry, where it is, the key it belongs under) of each `nvidia.com/*` quantity
    the API server does not read: under a misspelt `resources` key such as `limit`,
    directly under `resources`, or in `limits`/`requests` outside `resources`."""
    found = []
    resources = container.node.get("resources")
    if resources is not None and resources.is_map:
        for key, entry in resources.items():
            if key in ("limits", "requests", "claims"):
                continue
            if is_gpu_resource(key):
                found.append((entry, f"`resources.{key}`", None))
            elif entry.is_map and any(is_gpu_resource(name) for name in entry.value):
                found.append((entry, f"`resources.{key}`", _RESOURCE_KEYS.get(key)))
    for key in ("limits", "requests"):
        entry = container.node.get(key)
        if entry is not None and entry.is_map and any(is_gpu_resource(name) for name in entry.value):
            found.append((entry, f"`{key}` outside `resources`", None))
    return found


