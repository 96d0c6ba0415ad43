"""Checks register here; the engine asks which to run for a file kind.

A check is one small function that yields Findings. It names the codes it can
emit, so a run that selects none of them never calls it. File checks receive
(document, context); project checks (cross-file) receive the context only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from gpulint.model import Document, Finding, Fix, Node, Related, Span

CHECKS: list["Check"] = []


@dataclass(frozen=True)
class Check:
    fn: Callable
    codes: tuple[str, ...]
    kinds: tuple[str, ...]
    project: bool


def check(*codes: str, kinds: Iterable[str] = (), project: bool = False):
    """Register a check that may emit `codes` for files of `kinds`."""

    def register(fn):
        CHECKS.append(Check(fn, codes, tuple(kinds), project))
        return fn

    return register


@dataclass
class Context:
    """What every check may consult besides its own document."""

    documents: list[Document]
    settings: object  # gpulint.config.Settings
    options: dict = field(default_factory=dict)  # command-line facts: driver, gpu_class
    enabled: frozenset[str] = frozenset()
    cache: dict = field(default_factory=dict)  # per-run memo for facts several checks share

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """compute(), worked out once per run under `key`."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def of_kind(self, kind: str) -> list[Document]:
        return list(self.memo("of_kind", self._by_kind).get(kind, ()))

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
    """A Finding about `doc`; the slug and default severity come from the catalog."""
    return Finding(code=code, slug="", severity=severity or "", path=doc.path,
                   span=span_of(doc, where), message=message, fix=fix, related=tuple(related))


def related(doc: Document, where, message: str) -> Related:
    span = span_of(doc, where)
    return Related(doc.path, span.line, span.column, message)
