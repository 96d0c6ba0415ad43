"""What the checks of configs held as text by files of other kinds share: a held config that
is not valid YAML is a finding at its line, and the rest are judged by the owning kind's rules."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.model import Document, Span
from gpulint.registry import Context, finding


def judge_held(doc: Document, ctx: Context, errors: list[ParseError], code: str, consequence: str, rules):
    """`code` for each held config that could not be read (`consequence` says what follows),
    then the findings of `rules` on the configs read."""
    for exc in errors:
        yield finding(doc, code, Span.point(exc.line, exc.column), f"{exc.message}: {consequence}")
    for rule in rules:
        yield from rule(doc, ctx)
