"""What the run is made of: file kinds (how a file is recognised, parsed and checked)
and checks (one small function per rule).

A check is one small function that yields Findings. It names the codes it can
emit, so a run that selects none of them never calls it. File checks receive
(document, context); project checks (cross-file) receive the context only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable

from gpulint.model import Document, Finding, Fix, Node, Related, SharedText, Span
from gpulint.record import Frozen, Record, freeze
from gpulint.stored import Stored, StoredKind

# `typing` costs a one-file run about 2 ms to import: its names are for type checkers only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CHECKS: list["Check"] = []


class Check(Frozen):
    __slots__ = ("fn", "codes", "kinds", "project")

    fn: Callable
    codes: tuple[str, ...]
    kinds: tuple[str, ...]
    project: bool

    def __init__(self, fn: Callable, codes: tuple[str, ...], kinds: tuple[str, ...], project: bool) -> None:
        freeze(self, fn, codes, kinds, project)


def check(*codes: str, kinds: Iterable[str] = (), project: bool = False):
    """Register a check that may emit `codes` for files of `kinds`."""

    def register(fn):
        CHECKS.append(Check(fn, codes, tuple(kinds), project))
        return fn

    return register


def resolve(target: str) -> Callable:
    """The function a `module:function` reference names, imported on first use (a kind's
    parser or a cross-file fact costs its imports only in runs that need it)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


class Kind:
    """A file kind: how a file of it is recognised, parsed and checked.

    by_name(name) -> bool: the (lowercased, template-suffix-free) name alone makes it one.
    by_folder(folder, name) -> bool: the name in a folder of that name (both lowercased)
    makes it one (a systemd drop-in, `docker.service.d/*.conf`).
    wants(name) -> bool: a name whose content may make it one.
    by_content(name, text) -> True (it is one), False (it is none of gpulint's kinds: a
    name that claims the file, whose content says otherwise) or None (not this kind).
    Kinds are asked in `precedence` order; the first answer that is not None wins.
    """

    __slots__ = ("name", "precedence", "by_name", "by_folder", "wants", "by_content", "parse", "families",
                 "templated", "shared", "defines_shared", "kept", "suppressions", "block_strings")

    def __init__(self, name: str, *, precedence: int, parse: str = "", families: tuple[str, ...] = (),
                 by_name: Callable[[str], bool] | None = None, wants: Callable[[str], bool] | None = None,
                 by_content: Callable[[str, str], bool | None] | None = None,
                 by_folder: Callable[[str, str], bool] | None = None, templated: bool = False,
                 shared: str = "always", defines_shared: str = "", kept: str = "", suppressions: bool = True,
                 block_strings: bool = False) -> None:
        self.name = name
        self.precedence = precedence
        self.parse = parse  # "module:function" (text, document) -> tree; raises ParseError
        self.families = families  # modules whose import registers this kind's checks
        self.by_name, self.wants, self.by_content = by_name, wants, by_content
        self.by_folder = by_folder
        self.templated = templated  # `{{ }}` in the text marks the file templated
        # whether other files' checks consult a file of this kind: "always", "never",
        # "if-defines" (defines_shared(text) says so), "if-mapped" (an image mapping names
        # it), "in-doctor" (only when a live node is checked)
        self.shared = shared
        self.defines_shared = defines_shared
        # "module:function" (document) -> the part of a shared file's tree that other files'
        # checks consult (None: the whole tree; "": no such function): a run holds every
        # shared file from start to end, so what only its own checks read is let go, and
        # parsed again for them
        self.kept = kept
        self.suppressions = suppressions  # `# gpulint: disable=` comments are read
        self.block_strings = block_strings  # string values may span lines (YAML/TOML)


class Context(Record):
    """What every check may consult besides its own document."""

    __slots__ = ("documents", "settings", "options", "enabled", "cache", "providers")

    documents: list[Document]
    settings: object  # gpulint.config.Settings
    options: dict  # command-line facts: driver, gpu_class
    enabled: frozenset[str]
    cache: dict  # per-run memo for facts several checks share
    providers: dict  # fact name -> "module:function"(context)

    def __init__(self, documents: list[Document], settings: object, options: dict | None = None,
                 enabled: frozenset[str] = frozenset(), cache: dict | None = None,
                 providers: dict | None = None) -> None:
        self.documents = documents
        self.settings = settings
        self.options = {} if options is None else options
        self.enabled = enabled
        self.cache = {} if cache is None else cache
        self.providers = {} if providers is None else providers

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """compute(), worked out once per run under `key`."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def fact(self, name: str) -> Any:
        """A fact joined across file kinds (the runtimes of the linted node configs,
        kubelet's cgroup driver), computed once by the function the run names for it: a
        kind's checks use it without importing another kind."""
        return self.memo(f"fact:{name}", lambda: resolve(self.providers[name])(self))

    def of_kind(self, kind: str) -> list[Document]:
        groups = self.memo("of_kind", self._by_kind)
        found = groups.get(kind, ())
        if any(isinstance(d, (Stored, StoredKind)) for d in found):  # read from the index: unpickled now
            docs = []
            for d in found:
                if isinstance(d, StoredKind):
                    docs.extend(member.document() for member in d.members())
                else:
                    docs.append(d.document() if isinstance(d, Stored) else d)
            found = groups[kind] = docs
        return list(found)

    def _by_kind(self) -> dict[str, list[Document]]:
        out: dict[str, list[Document]] = {}
        for doc in self.documents:
            out.setdefault(doc.kind, []).append(doc)
        return out


def span_of(doc: Document, where) -> Span:
    """The span a finding should point at, for a Node, a Span, or a Dockerfile instruction."""
    if isinstance(where, Span):
        return where
    if isinstance(where, Node):
        return where.anchor
    start, end = getattr(where, "start", None), getattr(where, "end", None)
    if start is not None and end is not None:
        return doc.index.span(start, end)
    raise TypeError(f"cannot locate {where!r}")


def finding(doc: Document, code: str, where, message: str, *, severity: str | None = None,
            fix: Fix | None = None, related: Iterable[Related] = ()) -> Finding:
    """A Finding about `doc`; the slug and default severity come from the catalog. A fix
    that edits text other places use too (a YAML anchor) is made unsafe and says so."""
    if fix is not None and doc.cache.get("shared.text"):
        fix = shared_text_fix(doc, fix)
    return Finding(code=code, slug="", severity=severity or "", path=doc.path,
                   span=span_of(doc, where), message=message, fix=fix, related=tuple(related))


def shared_text_fix(doc: Document, fix: Fix) -> Fix:
    """`fix`, unsafe and naming the other places, when an edit falls inside text that
    several places of the file use (`doc.cache["shared.text"]`: a YAML anchor its aliases
    refer to); `fix` itself otherwise."""
    touched: list[SharedText] = []
    for edit in fix.edits:
        if edit.path != doc.abspath:
            continue
        for text in doc.cache.get("shared.text", ()):
            if edit.end > edit.start:
                inside = edit.start < text.end and edit.end > text.start
            else:  # an insertion
                inside = text.start < edit.start < text.end
            if inside and text not in touched:
                touched.append(text)
    if not touched:
        return fix
    lines = doc.index
    notes = []
    for text in touched:
        uses = sorted({lines.position(use)[0] for use in text.uses})
        where = (f"line {uses[0]}" if len(uses) == 1
                 else "lines " + ", ".join(map(str, uses[:-1])) + f" and {uses[-1]}")
        notes.append(f"`&{text.name}` (line {lines.position(text.start)[0]}), which `*{text.name}` "
                     f"also uses at {where}")
    return Fix(f"{fix.description} (unsafe: this edits the text of {'; and of '.join(notes)}: "
               f"the change applies there too)", fix.edits, safe=False)


def related(doc: Document, where, message: str) -> Related:
    span = span_of(doc, where)
    return Related(doc.path, span.line, span.column, message)
