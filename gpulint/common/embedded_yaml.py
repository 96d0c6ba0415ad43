"""YAML held as text by a string value (a ConfigMap's `data`, a HelmChart's
`valuesContent`), read where it is written: its nodes carry the file's own lines and
columns."""

from __future__ import annotations

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node, Span


def embedded_roots(text: str, doc, value: Node, what: str) -> list[Node]:
    """The YAML documents a string value of the file holds; `what` names it in errors."""
    from gpulint.formats.yamlpos import parse_yaml_documents

    start, end = doc.index.offsets(value.span)
    if text[start:start + 1] == "|":
        # a literal block keeps its text as written: its lines are read where they stand,
        # from the start of the first one, so every position is the file's own
        body = text.index("\n", start) + 1 if "\n" in text[start:end] else end
        index = _Within(text[body:end], doc.index, body)
        try:
            return [r for r in parse_yaml_documents(index.text, index) if r is not None]
        except ParseError as exc:
            raise ParseError(f"the embedded {what} is not valid YAML: {exc.message}",
                             exc.line + doc.index.position(body)[0] - 1, exc.column) from None
    # a quoted or folded value: read on its own, every node placed at the value
    try:
        return [_placed(r, value) for r in parse_yaml_documents(value.value, LineIndex(value.value))
                if r is not None]
    except ParseError as exc:
        raise ParseError(f"the embedded {what} is not valid YAML: {exc.message}",
                         value.span.line, value.span.column) from None


class _Within(LineIndex):
    """The index of a stretch of a file that starts a line: its offsets are turned into the
    file's lines and columns."""

    def __init__(self, text: str, outer: LineIndex, base: int) -> None:
        super().__init__(text)
        self.outer, self.base = outer, base

    def span(self, start: int, end: int) -> Span:
        return self.outer.span(start + self.base, end + self.base)


def _placed(node: Node, value: Node) -> Node:
    node._span = value.span
    node._key_span = value.span if node._key_span is not None else None
    for child in node.children():
        _placed(child, value)
    return node
