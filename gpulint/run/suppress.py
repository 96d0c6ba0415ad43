"""Inline suppressions, found in one place for every file kind.

`# gpulint: disable=GL105,GL107 -- reason` covers its own line and the next;
`# gpulint: disable-file=GL301 -- reason` covers the file; in Kubernetes objects
the annotation `gpulint.io/disable: "GL505 -- reason"` covers the object (or the
pod template) whose metadata carries it.
"""

from __future__ import annotations

import re

from gpulint.kinds import BY_NAME
from gpulint.model import Document, Node, Suppression
from gpulint.regex import lazy

# only the head is a pattern: what follows is split by hand, since overlapping `\s*` and
# lazy groups over a long run of spaces made a regular expression take seconds per line
_PRAGMA_HEAD = lazy(r"#[ \t]*gpulint:[ \t]*(?P<scope>disable-file|disable)[ \t]*=[ \t]*")
_CODE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,- \t")


_LOOSE = lazy(r"#[ \t]*gpulint[ \t]*:[ \t]*(?P<word>[A-Za-z_-]*)")
_SCOPES = ("disable", "disable-file")


def _malformed(line: str) -> tuple[str, int] | None:
    """Why a comment that starts like a suppression is none, and where it starts."""
    loose = _LOOSE.search(line)
    if loose is None:
        return None
    word, after = loose["word"], line[loose.end():].lstrip(" \t")
    if word.lower() in _SCOPES and not after.startswith("="):
        why = f"`{word}` needs `=` and the codes: `# gpulint: {word.lower()}=CODE -- reason`"
    elif word.lower() not in _SCOPES:
        import difflib

        near = difflib.get_close_matches(word.lower(), _SCOPES, n=1, cutoff=0.6)
        why = (f"`{word}` is not a suppression; did you mean `{near[0]}`?" if near and word else
               "a `gpulint:` comment that is no suppression; write `# gpulint: disable=CODE -- reason`")
    else:
        why = "its codes hold characters that are no rule code or slug"
    return why, loose.start()


def _pragma(line: str) -> tuple[str, int, str, str | None, int] | None:
    """(scope, codes start, codes text, reason, start of the comment) of a suppression comment
    in `line`; None when the line has none or its codes hold other characters."""
    head = _PRAGMA_HEAD.search(line)
    if head is None:
        return None
    rest = line[head.end():]
    cut = rest.find("--")
    while cut > 0 and rest[cut - 1] not in " \t":
        cut = rest.find("--", cut + 2)
    codes, reason = (rest[:cut], rest[cut + 2:].strip()) if cut > 0 else (rest, None)
    if not set(codes) <= _CODE_CHARS:
        return None
    return head["scope"], head.end(), codes.rstrip(), reason or None, head.start()


ANNOTATION = "gpulint.io/disable"


def _inside_instruction(doc: Document, line_no: int, line: str) -> str:
    """Why a `# gpulint:` text after an instruction on its line is no comment in a Dockerfile."""
    keyword = None
    for ins in getattr(doc.tree, "instructions", ()):
        if ins.line <= line_no <= ins.end_line:
            keyword = ins.keyword
            break
    if keyword is None and doc.tree is None:  # a file that does not parse: its first word
        word = line.split(None, 1)[0].upper() if line.strip() else ""
        keyword = word if word.isalpha() else None
    what = f"the {keyword} instruction" if keyword else "the instruction"
    return (f"in a Dockerfile a comment must start its line: this text is part of {what} "
            f"(Docker reads `#` as a comment only at the start of a line); put the suppression "
            f"on a line of its own above it")


def _codes(text: str, base: int) -> tuple[tuple[str, ...], dict[str, tuple[int, int]]]:
    """Each code once, at its first place."""
    spans: dict[str, tuple[int, int]] = {}
    for match in re.finditer(r"[A-Za-z0-9_-]+", text):
        spans.setdefault(match[0], (base + match.start(), base + match.end()))
    return tuple(spans), spans


def find_suppressions(doc: Document) -> list[Suppression] | tuple[()]:
    out: list[Suppression] = []
    if BY_NAME[doc.kind].suppressions and "gpulint:" in doc.text:
        out.extend(_comments(doc, comment_lines(doc)))
    if doc.kind == "kubernetes" and ANNOTATION in doc.text:
        for obj in doc.tree or ():
            _annotations(obj, doc, out)
    return out or ()  # most files have none: a run keeps one answer per file


def comment_lines(doc: Document) -> set[int] | None:
    """In documentation, the lines of its shell blocks: the only place a `#` comment is
    one (None: every line of the file can hold a comment)."""
    if doc.kind != "commands" or not doc.path.lower().endswith((".md", ".markdown", ".rst")):
        return None
    from gpulint.kinds.commands.parse import shell_regions

    lines: set[int] = set()
    for start, end, _ in shell_regions(doc.path, doc.text, doc.index):
        first, last = doc.index.position(start)[0], doc.index.position(max(start, end - 1))[0]
        lines.update(range(first, last + 1))
    return lines


def _multiline_values(doc: Document) -> list[tuple[int, int]]:
    """Offsets of the string values that span lines (YAML block scalars, TOML multi-line
    strings): a `#` inside one is text, not a comment, and removing its line would change
    the value (a config.toml embedded in a ConfigMap)."""
    if not BY_NAME[doc.kind].block_strings:
        return []
    ranges, stack = [], [doc.tree] if isinstance(doc.tree, Node) else list(doc.tree or ())
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.is_scalar:
            if isinstance(node.value, str) and node.span.end_line > node.span.line:
                ranges.append(doc.index.offsets(node.span))
        else:
            stack.extend(node.children())
    return ranges


def _comments(doc: Document, allowed: set[int] | None = None) -> list[Suppression]:
    out = []
    index = doc.index
    values = None
    for line_no in range(1, index.line_count + 1):
        line = index.line_text(line_no)
        if "gpulint:" not in line or (allowed is not None and line_no not in allowed):
            continue
        found = _pragma(line)
        line_start = index.starts[line_no - 1]
        if doc.kind == "dockerfile":
            loose = _LOOSE.search(line)
            if loose is not None and line[:loose.start()].strip():
                # Docker reads `#` as a comment only where it starts the line (BuildKit's
                # parser: `isComment`); anywhere else it is part of the instruction
                span = index.span(line_start + loose.start(), line_start + len(line))
                out.append(Suppression((), span, line_no, line_no, None,
                                       problem=_inside_instruction(doc, line_no, line)))
                continue
        if found is None:
            bad = _malformed(line)
            values = _multiline_values(doc) if values is None else values
            if bad is not None and not any(s <= line_start + bad[1] < e for s, e in values):
                span = index.span(line_start + bad[1], line_start + len(line))
                out.append(Suppression((), span, line_no, line_no, None, problem=bad[0]))
            continue
        scope, codes_at, codes_text, reason, comment_at = found
        values = _multiline_values(doc) if values is None else values
        if any(start <= line_start + comment_at < end for start, end in values):
            continue
        codes, code_spans = _codes(codes_text, line_start + codes_at)
        whole_line = not line[:comment_at].strip()
        if whole_line:  # the comment is the line: removing it removes the line
            next_start = index.starts[line_no] if line_no < index.line_count else len(doc.text)
            edit = (line_start, next_start)
        else:
            cut = comment_at
            while cut > 0 and line[cut - 1] in " \t":
                cut -= 1
            edit = (line_start + cut, line_start + len(line))
        span = index.span(line_start + comment_at, line_start + len(line))
        file_wide = scope == "disable-file"
        out.append(Suppression(
            codes=codes, span=span,
            first_line=1 if file_wide else line_no,
            last_line=index.line_count if file_wide else line_no + 1,
            reason=reason, edit_range=edit, code_spans=code_spans,
            problem=None if codes else "it names no rule: write the codes after `=` "
                                       "(`# gpulint: disable=GL105 -- reason`)",
        ))
    return out


def _placed(doc: Document, value: Node, spans: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """The codes' offsets in the file, where the annotation is written as it reads (plain
    or quoted on one line, without escapes); none otherwise."""
    start, end = doc.index.offsets(value.span)
    written = doc.text[start:end]
    if written[:1] in "'\"" and written[-1:] == written[:1]:
        written, start = written[1:-1], start + 1
    if written != value.str():
        return {}
    return {code: (start + a, start + b) for code, (a, b) in spans.items()}


def _annotations(node: Node, doc: Document, out: list[Suppression]) -> None:
    if node.is_map:
        value = node.get("metadata", "annotations", ANNOTATION)
        if value is not None and value.str():
            text, _, reason = value.str().partition("--")
            codes, spans = _codes(text, 0)
            out.append(Suppression(codes=codes, span=value.span, first_line=node.span.line,
                                   last_line=node.span.end_line, reason=reason.strip() or None,
                                   code_spans=_placed(doc, value, spans)))
    for child in node.children():
        if not child.is_scalar:
            _annotations(child, doc, out)
