"""Findings on commands that a CI matrix job runs once per combination.

A job with a matrix is read once per combination (see `matrix`), so a check sees one
command per combination, each at the place its text is written. A finding there names
the combination whose values make it (`[matrix: cuda=11.0]`) and relates where those
values are written; the same finding from several combinations is reported once,
naming them, and one that every combination gives names none: the matrix does not make it.
"""

from __future__ import annotations

import functools

from gpulint.formats.shell import Word
from gpulint.kinds.commands.command import ContainerCommand
from gpulint.kinds.commands.matrix import Use, github_text
from gpulint.model import Document, Finding, Related
from gpulint.record import replace

_SHOWN = 6  # combinations a message names before it counts the rest


def per_command(check):
    """A check of one command (`check(doc, ctx, command)`) run over a file's commands,
    its findings named and merged by matrix combination."""

    @functools.wraps(check)
    def run(doc: Document, ctx):
        found = [(command, f) for command in doc.tree or () for f in check(doc, ctx, command)]
        return merged(doc, found)

    return run


def merged(doc: Document, found: list[tuple[ContainerCommand, Finding]]) -> list[Finding]:
    groups: dict[tuple, list[tuple[ContainerCommand, Finding]]] = {}
    for command, f in found:
        groups.setdefault((f.code, f.span, f.message, f.severity), []).append((command, f))
    if not any(command.matrix for command, _ in found):
        return [items[0][1] for items in groups.values()]
    readings: dict[int, list[ContainerCommand]] = {}  # each command's readings, by where it is written
    for command in doc.tree or ():
        if command.matrix:
            readings.setdefault(_source(command), []).append(command)
    every: dict[tuple[int, int, int], set[str]] = {}
    return [_one(doc, items, readings, every) for items in groups.values()]


def _one(doc: Document, items: list[tuple[ContainerCommand, Finding]], readings: dict[int, list[ContainerCommand]],
         every: dict[tuple[int, int, int], set[str]]) -> Finding:
    first = items[0][1]
    if not any(command.matrix for command, _ in items):
        return first
    start, end = doc.index.offsets(first.span)
    labels = list(dict.fromkeys(_label(command, start, end) for command, _ in items))
    key = (_source(items[0][0]), start, end)
    if key not in every:  # the labels of all the combinations the command is read with
        every[key] = {_label(command, start, end) for command in readings.get(key[0], ())}
    related = list(first.related)
    for command, _ in items:
        related += [r for r in _related(doc, command, start, end) if r not in related]
    if "" in labels or len(every[key]) > 1 and set(labels) >= every[key]:
        return replace(first, related=tuple(related))  # it holds whatever the matrix values
    shown = "; ".join(labels[:_SHOWN]) + (f"; and {len(labels) - _SHOWN} more" if len(labels) > _SHOWN else "")
    what = _what(_inside(items[0][0], start, end) or items[0][0].matrix)
    # a fix would write one combination's value over the reference the others share
    return replace(first, message=f"[{what}: {shown}] {first.message}", related=tuple(related),
                   fix=None if _inside(items[0][0], start, end) else first.fix)


def combination(doc: Document, command: ContainerCommand, word: Word) -> tuple[str, tuple[Related, ...]]:
    """How a finding about one word of a command names the matrix combination whose
    values are in it (`(matrix: cuda=12.8.1)`), and where they are written; nothing for
    a word the matrix does not reach."""
    inside = _inside(command, word.start, word.end)
    if not inside:
        return "", ()
    return (f"({_what(inside)}: {_label(command, word.start, word.end)})",
            tuple(dict.fromkeys(_related(doc, command, word.start, word.end))))


def _source(command: ContainerCommand) -> int:
    """Where the command is written: the same for each combination it is read with."""
    return command.first_word.start


def _inside(command: ContainerCommand, start: int, end: int) -> list[Use]:
    """The matrix values put into the words a finding at [start, end) points at."""
    return [use for use in command.matrix if use.start < end and start < use.end]


def _what(uses: list[Use] | tuple[Use, ...]) -> str:
    """What put the values in: the job's matrix, or only the variables every run has."""
    return "matrix" if any(not use.value.variable for use in uses) else "variables"


def _label(command: ContainerCommand, start: int, end: int) -> str:
    uses = _inside(command, start, end) or command.matrix
    return ", ".join(dict.fromkeys(use.value.label for use in uses))


def _related(doc: Document, command: ContainerCommand, start: int, end: int) -> list[Related]:
    """Where the values a finding's words hold are written, and the references that read
    as nothing (a key the combination lacks), which move the words around them."""
    out = []
    unset = [use for use in command.matrix if use.value.node is None]
    for use in dict.fromkeys(_inside(command, start, end) + unset):
        value = use.value
        if value.node is None:
            line, column = doc.index.position(use.start)
            out.append(Related(doc.path, line, column, f"a combination without `{value.name}` reads "
                                                       f"`${{{{ matrix.{value.name} }}}}` as nothing"))
            continue
        span = value.node.span
        written = doc.text[slice(*doc.index.offsets(span))]
        note = ""
        if value.node.tag == "float" and written != value.text and github_text(value.node) == value.text:
            note = f"; written as a YAML number, it becomes `{value.text}`: quote it to keep `{written}`"
        what = "variable" if value.variable else "matrix value"
        out.append(Related(doc.path, span.line, span.column, f"{what} `{value.name}: {written}`{note}"))
    return out
