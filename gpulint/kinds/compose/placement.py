"""Where Compose reads a GPU reservation, and where a block indented one level wrong lands.

Compose reads a GPU reservation only at `services.<name>.deploy.resources.reservations
.devices`. Each of `deploy`, `resources`, `reservations` and `devices` written one
level too far out (or in) becomes a key of the wrong mapping: a service of its own
named `deploy`, a top-level key, a key of the service or of `deploy` that the schema
does not have. Compose's schema allows no unknown key anywhere but under `x-`
extension fields, so it rejects the file; where the misplaced key follows its
intended parent left empty (`resources:` and then `reservations:` at the same
indentation), the empty parent is what Compose names (`... resources must be a
mapping`), except `deploy`, which may be empty.

Only blocks that hold a GPU device request are considered: gpulint judges GPU
settings, and a misplaced memory reservation is another tool's business.
"""

from __future__ import annotations

from gpulint.kinds.compose.facts import is_gpu_device, services
from gpulint.model import Document, Edit, Fix, Node
from gpulint.record import Frozen, freeze

# Each key of the chain, and the key it belongs under.
CHAIN = ("deploy", "resources", "reservations", "devices")
_PARENT = {"resources": "deploy", "reservations": "resources", "devices": "reservations"}
# Where, below a service, each key of the chain is read (`devices` also at the service's
# own level, for device files, and under `limits`, which GL909 and GL901 report).
_VALID = {((), "deploy"), ((), "devices"), (("deploy",), "resources"),
          (("deploy", "resources"), "reservations"), (("deploy", "resources", "reservations"), "devices"),
          (("deploy", "resources", "limits"), "devices")}
# Parents that may be left empty (`deploy:` with nothing under it is a valid null).
_MAY_BE_NULL = ("deploy",)
_MAX_DEPTH = 6  # a misplaced block sits a level or two from where it belongs


class Misplaced(Frozen):
    __slots__ = ("entry", "key", "where", "compose_says", "belongs", "before")

    entry: Node  # the misplaced key's value; its key_span is where the finding points
    key: str
    where: str  # where Compose finds it, as a path (`services.app.deploy`), "" for the top level
    compose_says: str | None  # Compose's refusal, when known for that place
    belongs: str  # where it belongs, as a path
    # (key, node, key of the mapping holding it) of the entry written right before it
    before: tuple[str, Node, str | None] | None

    def __init__(self, entry: Node, key: str, where: str, compose_says: str | None, belongs: str,
                 before: tuple[str, Node, str | None] | None = None) -> None:
        freeze(self, entry, key, where, compose_says, belongs, before)


def holds_gpu_request(node: Node | None) -> bool:
    """A GPU device request anywhere in the node, `x-` extension fields aside."""
    if node is None:
        return False
    if node.is_seq:
        return any(is_gpu_device(item) or holds_gpu_request(item) for item in node.value)
    return any(holds_gpu_request(value) for key, value in node.items() if not str(key).startswith("x-"))


def misplaced_reservations(doc: Document) -> list[Misplaced]:
    """Every key of the GPU reservation chain written where Compose does not read it."""
    if "compose.misplaced" not in doc.cache:
        found = _top_level(doc) + _as_services(doc)
        dedented = {item.key for item in found if item.where == "services"}
        for service in services(doc):
            if service.name not in dedented:
                found += _in_service(service.name, service.node, ())
        seen, unique = set(), []
        for item in found:  # a block merged into several services is one mistake
            if item.entry.key_span not in seen:
                seen.add(item.entry.key_span)
                unique.append(item)
        doc.cache["compose.misplaced"] = unique
    return doc.cache["compose.misplaced"]


def _service_above(doc: Document, line: int) -> str | None:
    """The last service defined above `line`: the one a dedented block was meant for."""
    above = [s for s in services(doc) if s.name_span.line < line]
    return above[-1].name if above else None


def _belongs(service: str | None, key: str) -> str:
    path = {"deploy": (), "resources": ("deploy",), "reservations": ("deploy", "resources"),
            "devices": ("deploy", "resources", "reservations")}[key]
    return ".".join(("services", service or "<service>", *path))


def _top_level(doc: Document) -> list[Misplaced]:
    root = doc.tree
    out = []
    entries = list(root.items()) if root is not None else []
    for i, (key, entry) in enumerate(entries):
        if key in CHAIN and entry.key_span is not None and holds_gpu_request(entry):
            service = _service_above(doc, entry.key_span.line)
            out.append(Misplaced(entry, key, "", f"additional properties '{key}' not allowed",
                                 _belongs(service, key), (*entries[i - 1], None) if i else None))
    return out


def _as_services(doc: Document) -> list[Misplaced]:
    """Chain keys dedented to the level of the services, read as services of that name."""
    out = []
    listed = services(doc)
    for i, service in enumerate(listed):
        if service.name not in CHAIN or service.get("image") is not None or service.get("build") is not None:
            continue
        inner = [key for key in service.node.value if _PARENT.get(key) == service.name]
        if not inner or not holds_gpu_request(service.node) or service.node.key_span is None:
            continue
        meant = _service_above(doc, service.node.key_span.line)
        before = (listed[i - 1].name, listed[i - 1].node, "services") if i else None
        out.append(Misplaced(service.node, service.name, "services",
                             f"services.{service.name} additional properties '{inner[0]}' not allowed",
                             _belongs(meant, service.name), before))
    return out


def _in_service(name: str, mapping: Node, path: tuple[str, ...]) -> list[Misplaced]:
    out = []
    before = None
    for key, entry in mapping.items():
        if str(key).startswith("x-"):
            continue  # extension fields are Compose's to ignore (and anchors' to hold)
        if key in CHAIN and (path, key) not in _VALID and entry.key_span is not None \
                and _gpu_block(key, entry):
            where = ".".join(("services", name, *path))
            out.append(Misplaced(entry, key, where, _refusal(mapping, where, path, key),
                                 _belongs(name, key), before))
            before = (key, entry, path[-1] if path else name)
            continue
        before = (key, entry, path[-1] if path else name)
        if entry.is_map and len(path) < _MAX_DEPTH:
            out += _in_service(name, entry, (*path, key))
    return out


def _gpu_block(key: str, entry: Node) -> bool:
    if key == "devices":
        return any(is_gpu_device(item) for item in entry.value) if entry.is_seq else False
    return holds_gpu_request(entry)


# The mappings of the chain, whose schema objects allow no other key.
_SCHEMA_OBJECTS = ((), ("deploy",), ("deploy", "resources"), ("deploy", "resources", "reservations"),
                   ("deploy", "resources", "limits"))


def _refusal(mapping: Node, where: str, path: tuple[str, ...], key: str) -> str | None:
    """What Compose prints for `key` at `where`: its intended parent, left empty beside
    it, is named first; None where gpulint does not know the schema's words."""
    parent = _PARENT.get(key)
    sibling = mapping.get(parent) if parent else None
    if sibling is not None and sibling.is_scalar and sibling.value is None and parent not in _MAY_BE_NULL:
        return f"{where}.{parent} must be a mapping"
    if path in _SCHEMA_OBJECTS:
        return f"{where} additional properties '{key}' not allowed"
    return None


# ---------------------------------------------------------------- moving the block in


def reindent(doc: Document, item: Misplaced) -> Fix | None:
    """Indent a block that is one level too far out under the entry written right before
    it, when that entry (or its last descendant) is the key it belongs under, in block
    style: `resources:` after an empty `deploy:`, `reservations:` after the `resources`
    block, `deploy:` after the service it follows. None otherwise (a block that must move
    out, or elsewhere, is the user's to place)."""
    target = _intended_parent(item.before, item.key) if item.before is not None else None
    span = item.entry.key_span
    if target is None or target.key_span is None or span is None:
        return None
    column = span.column - 1
    start = doc.index.starts[span.line - 1]
    if doc.text[start:start + column].strip(" "):
        return None  # `- key:` or a flow mapping
    if target.is_map and target.value:
        first = next(iter(target.value.values())).key_span
        if first is None or first.line <= target.key_span.line:
            return None  # a flow mapping
        wanted = first.column - 1
    elif target.is_scalar and target.value is None:
        wanted = target.key_span.column - 1 + _step(item.entry, column)
    else:
        return None
    if wanted <= column:
        return None
    edits = []
    for line in range(span.line, item.entry.span.end_line + 1):
        offset = doc.index.starts[line - 1]
        if doc.index.line_text(line).strip():
            edits.append(Edit(doc.abspath, offset, offset, " " * (wanted - column)))
    return Fix(f"indent `{item.key}` under `{item.belongs}`", tuple(edits),
               safe=item.where not in ("", "services"))  # which service it was meant for is a guess


def _intended_parent(before: tuple[str, Node, str | None], key: str) -> Node | None:
    """The entry written right before the block, or its last descendant, that the block
    belongs under; None when the last thing written before it is something else."""
    name, node, holder = before
    floor = node.key_span.line if node.key_span is not None else None
    while floor is not None and node.key_span is not None and node.key_span.line >= floor:
        if (holder == "services") if key == "deploy" else name == _PARENT[key]:
            return node
        if not node.is_map or not node.value:
            return None
        holder, (name, node) = name, list(node.items())[-1]
    return None  # merged in from an anchor written elsewhere


def _step(entry: Node, column: int) -> int:
    """The indentation step the block itself uses (2 when it shows none)."""
    first = next(iter(entry.value.values())).key_span if entry.is_map and entry.value else None
    return first.column - 1 - column if first is not None and first.column - 1 > column else 2
