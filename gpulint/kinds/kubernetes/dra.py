"""Dynamic Resource Allocation objects of a manifest: DeviceClasses, ResourceClaims and
ResourceClaimTemplates with their device requests, the claims pods name, and the
attribute references inside CEL selectors (with their places inside the YAML scalar).
"""

from __future__ import annotations

from gpulint.kinds.kubernetes.facts import object_kind, object_name, objects, scalar_str
from gpulint.knowledge.dra import CLASSIC_KINDS, DRA_KINDS, GROUP
from gpulint.model import Document, Node, Span, sequence
from gpulint.record import Frozen, Record, freeze
from gpulint.regex import lazy


def dra_api_version(obj: Node) -> str | None:
    """The object's apiVersion when it is a `resource.k8s.io` DRA object (classic DRA's too)."""
    version = scalar_str(obj.get("apiVersion"))
    if version is None or not version.startswith(GROUP + "/") or object_kind(obj) not in DRA_KINDS + CLASSIC_KINDS:
        return None
    return version


def dra_objects(doc: Document) -> list[Node]:
    """The DeviceClass, ResourceClaim and ResourceClaimTemplate objects of a document, and
    classic DRA's ResourceClass and parameters objects."""
    found = doc.cache.get("k8s.dra_objects")  # memoised: each DRA rule asks
    if found is None:
        found = doc.cache["k8s.dra_objects"] = [obj for obj, _ in objects(doc) if dra_api_version(obj) is not None]
    return found


def claim_spec(obj: Node) -> Node | None:
    """A ResourceClaim's `spec`, a ResourceClaimTemplate's `spec.spec`."""
    kind = object_kind(obj)
    if kind == "ResourceClaim":
        return obj.get("spec")
    if kind == "ResourceClaimTemplate":
        return obj.get("spec", "spec")
    return None


class Request(Record):
    """One way of picking devices: a request's `exactly` (v1beta2, v1), the request
    itself (v1beta1) or one of its `firstAvailable` sub-requests."""

    __slots__ = ("name", "node", "class_node")

    name: str | None  # the request's name (a sub-request's own name is not a claim's)
    node: Node  # the mapping that holds deviceClassName and selectors
    class_node: Node | None

    def __init__(self, name: str | None, node: Node, class_node: Node | None) -> None:
        self.name = name
        self.node = node
        self.class_node = class_node

    @property
    def device_class(self) -> str | None:
        return scalar_str(self.class_node)


def requests(obj: Node) -> list[Request]:
    """The device requests of a ResourceClaim or ResourceClaimTemplate, in every shape."""
    out = []
    for request in sequence((claim_spec(obj) or Node(None, 0)).get("devices", "requests")):
        if not request.is_map:
            continue
        name = scalar_str(request.get("name"))
        for holder in (request, request.get("exactly"), *sequence(request.get("firstAvailable"))):
            if holder is not None and holder.is_map and (
                    holder is not request or holder.get("deviceClassName") is not None
                    or holder.get("selectors") is not None):
                out.append(Request(name, holder, holder.get("deviceClassName")))
    return out


def selector_expressions(obj: Node) -> list[Node]:
    """The `cel.expression` scalars of a DeviceClass or of a claim's requests."""
    holders = [obj.get("spec")] if object_kind(obj) == "DeviceClass" else [r.node for r in requests(obj)]
    out = []
    for holder in holders:
        for selector in sequence(holder.get("selectors") if holder is not None else None):
            expression = selector.get("cel", "expression")
            if expression is not None and scalar_str(expression) is not None:
                out.append(expression)
    return out


def defined_names(docs, kinds: tuple[str, ...]) -> dict[str, tuple[Document, Node]]:
    """name -> (document, object) for the DRA objects of `kinds` in `docs`, first of each."""
    out: dict[str, tuple[Document, Node]] = {}
    for doc in docs:
        for obj in dra_objects(doc):
            name = object_name(obj)
            if name and object_kind(obj) in kinds:
                out.setdefault(name, (doc, obj))
    return out


# ---------------------------------------------------------------- CEL references

# `device.attributes["domain"].name`, `device.capacity['domain'].name`, also with `.?name`
# (optional field) or `["name"]`; a name followed by `(` is a method or macro on the map.
_REFERENCE = lazy(
    r"""\bdevice\s*\.\s*(attributes|capacity)\s*\[\s*(["'])([^"'\\]*)\2\s*\]"""
    r"""(?:\s*\.\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)(?!\s*\()|\s*\[\s*(["'])([^"'\\]*)\5\s*\])?""")


class Reference(Frozen):
    __slots__ = ("what", "domain", "name", "domain_at", "name_at")

    what: str  # "attributes" or "capacity"
    domain: str
    name: str | None  # None when the expression only names the domain
    domain_at: tuple[int, int]  # [start, end) of the domain in the expression text
    name_at: tuple[int, int] | None

    def __init__(self, what: str, domain: str, name: str | None, domain_at: tuple[int, int],
                 name_at: tuple[int, int] | None) -> None:
        freeze(self, what, domain, name, domain_at, name_at)


def cel_references(expression: str) -> list[Reference]:
    """The device attribute and capacity references of a CEL selector."""
    out = []
    for match in _REFERENCE.finditer(expression):
        name_group = 4 if match.group(4) is not None else 6
        name = match.group(name_group)
        out.append(Reference(match.group(1), match.group(3), name, match.span(3),
                             match.span(name_group) if name is not None else None))
    return out


def place_in_scalar(doc: Document, node: Node, text: str, at: tuple[int, int]) -> Span:
    """The span in the file of `text[at[0]:at[1]]`, where `text` is the value of the scalar
    `node`: the same piece is looked for in the source as written (the occurrence of the
    same rank), which holds for plain, quoted and block scalars alike; the whole scalar
    when escapes or folding make the piece appear a different number of times."""
    piece = text[at[0]:at[1]]
    start, end = doc.index.offsets(node.span)
    source = doc.text[start:end]
    if not piece or _rank(text, piece, len(text)) != _rank(source, piece, len(source)):
        return node.span
    found = -1
    for _ in range(_rank(text, piece, at[0]) + 1):
        found = source.find(piece, found + 1)
    return doc.index.span(start + found, start + found + len(piece))


def _rank(text: str, piece: str, offset: int) -> int:
    """How many occurrences of `piece` start before `offset` (overlapping ones counted)."""
    count, found = 0, text.find(piece)
    while 0 <= found < offset:
        count += 1
        found = text.find(piece, found + 1)
    return count
