"""Inline suppressions, found in one place for every file kind.

`# gpulint: disable=GL105,GL107 -- reason` covers its own line and the next;
`# gpulint: disable-file=GL301 -- reason` covers the file; in Kubernetes objects
the annotation `gpulint.io/disable: "GL505 -- reason"` covers the object (or the
pod template) whose metadata carries it.
"""

from __future__ import annotations

import re

from gpulint.model import Document, Node, Suppression

_PRAGMA = re.compile(
    r"#\s*gpulint:\s*(?P<scope>disable-file|disable)\s*=\s*(?P<codes>[A-Za-z0-9_,\- ]*?)"
    r"(?:\s+--\s*(?P<reason>.*?))?\s*$"
)
ANNOTATION = "gpulint.io/disable"
_COMMENTED_KINDS = ("containerd", "dockerfile", "kubernetes", "gpu-operator-values", "compose", "commands")


def _codes(text: str, base: int) -> tuple[tuple[str, ...], dict[str, tuple[int, int]]]:
    codes, spans = [], {}
    for match in re.finditer(r"[A-Za-z0-9_-]+", text):
        codes.append(match[0])
        spans[match[0]] = (base + match.start(), base + match.end())
    return tuple(codes), spans


def find_suppressions(doc: Document) -> list[Suppression]:
    out: list[Suppression] = []
    if doc.kind in _COMMENTED_KINDS and "gpulint:" in doc.text:
        out.extend(_comments(doc, _shell_lines(doc)))
    if doc.kind == "kubernetes" and ANNOTATION in doc.text:
        for obj in doc.tree or ():
            _annotations(obj, doc, out)
    return out


def _shell_lines(doc: Document) -> set[int] | None:
    """In documentation, the lines of its shell blocks: the only place a `#` comment is
    one (None: every line of the file can hold a comment)."""
    if doc.kind != "commands" or not doc.path.lower().endswith((".md", ".markdown", ".rst")):
        return None
    from gpulint.parse.commands import shell_regions

    lines: set[int] = set()
    for start, end, _ in shell_regions(doc.path, doc.text, doc.index):
        first, last = doc.index.position(start)[0], doc.index.position(max(start, end - 1))[0]
        lines.update(range(first, last + 1))
    return lines


def _comments(doc: Document, allowed: set[int] | None = None) -> list[Suppression]:
    out = []
    index = doc.index
    for line_no in range(1, index.line_count + 1):
        line = index.line_text(line_no)
        if "gpulint:" not in line or (allowed is not None and line_no not in allowed):
            continue
        match = _PRAGMA.search(line)
        if not match:
            continue
        line_start = index.starts[line_no - 1]
        codes, code_spans = _codes(match["codes"], line_start + match.start("codes"))
        whole_line = not line[: match.start()].strip()
        if whole_line:  # the comment is the line: removing it removes the line
            next_start = index.starts[line_no] if line_no < index.line_count else len(doc.text)
            edit = (line_start, next_start)
        else:
            cut = match.start()
            while cut > 0 and line[cut - 1] in " \t":
                cut -= 1
            edit = (line_start + cut, line_start + len(line))
        span = index.span(line_start + match.start(), line_start + len(line))
        file_wide = match["scope"] == "disable-file"
        out.append(Suppression(
            codes=codes, span=span,
            first_line=1 if file_wide else line_no,
            last_line=index.line_count if file_wide else line_no + 1,
            reason=match["reason"] or None, edit_range=edit, code_spans=code_spans,
        ))
    return out


def _annotations(node: Node, doc: Document, out: list[Suppression]) -> None:
    if node.is_map:
        value = node.get("metadata", "annotations", ANNOTATION)
        if value is not None and value.str():
            text, _, reason = value.str().partition("--")
            codes = tuple(re.findall(r"[A-Za-z0-9_-]+", text))
            out.append(Suppression(codes=codes, span=value.span, first_line=node.span.line,
                                   last_line=node.span.end_line, reason=reason.strip() or None))
    for child in node.children():
        if not child.is_scalar:
            _annotations(child, doc, out)
