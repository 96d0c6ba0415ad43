"""Neutralising template expressions (Helm/Go `{{ }}`, Jinja `{% %}`) so a templated
file can still be parsed, with every position left where it was written."""

from __future__ import annotations

import re
from bisect import bisect_left

from gpulint.regex import lazy

_EXPR = lazy(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
TEMPLATE_SUFFIXES = (".tmpl", ".tpl", ".j2", ".jinja", ".jinja2", ".gotmpl", ".template")


def strip_template_suffix(name: str) -> tuple[str, bool]:
    lower = name.lower()
    for suffix in TEMPLATE_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], True
    return name, False


def has_template_syntax(text: str) -> bool:
    return "{{" in text or "{%" in text


def neutralise(text: str) -> str:
    """Replace each template expression with text of the same length.

    An expression alone on its line (control flow, `toYaml ... | nindent`) becomes
    blanks; one inside a quoted string becomes filler letters; one standing for a
    value becomes a quoted string of the same length. Newlines are kept, so every
    line and column of the rest of the file is unchanged.
    """
    scan = _Scan(text)
    out, last = [], 0
    for start, end, dead in _pieces(scan):
        out.append(text[last:start])
        piece = text[start:end]
        silent = dead or (_is_statement(piece) and not _inline_loop(piece))
        out.append(_blank(piece) if silent else _replacement(scan, start, end))
        last = end
    out.append(text[last:])
    return "".join(out)


_CLOSER = {"{": "}}", "%": "%}", "#": "#}"}
_OPENERS: dict[str, re.Pattern] = {}
_NONSPACE = lazy(r"\S")


def _opener(kinds: str) -> re.Pattern:
    if kinds not in _OPENERS:
        _OPENERS[kinds] = re.compile(r"\{[" + re.escape(kinds) + "]")
    return _OPENERS[kinds]


class _Scan:
    """One text's expressions and lines, with what is learnt about them kept, so that no
    line is read again for each expression on it (a long line of expressions, or an
    unclosed `{{`, would otherwise take time growing with the square of its length)."""

    def __init__(self, text: str):
        self.text = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.unclosed: dict[tuple[str, int], int] = {}  # (kind, endpos) -> no closer from here on
        self.loop_ends: dict[int, int | None] = {}
        self.rest: dict[int, str] = {}
        self.first_text: dict[int, int] = {}
        self.quotes = (-1, 0, 0, 0)  # line start, position, `"` and `'` counted before it

    def expressions(self, pos: int = 0, endpos: int | None = None):
        """(start, end) of each match of `_EXPR.finditer(text, pos, endpos)`, found in time
        linear in the text: `.*?` tried from every unclosed `{{` reads to the end each time."""
        text = self.text
        endpos = len(text) if endpos is None else min(endpos, len(text))
        kinds = "".join(k for k in "{%#" if self.unclosed.get((k, endpos), endpos + 1) > pos)
        while kinds:
            found = _opener(kinds).search(text, pos, endpos)
            if found is None:
                return
            start = found.start()
            kind = text[start + 1]
            close = -1
            if self.unclosed.get((kind, endpos), endpos + 1) > start + 2:
                close = text.find(_CLOSER[kind], start + 2, endpos)
            if close < 0:
                key = (kind, endpos)
                self.unclosed[key] = min(self.unclosed.get(key, endpos + 1), start + 2)
                kinds = kinds.replace(kind, "")
                pos = start + 1
                continue
            yield start, close + 2
            pos = close + 2

    def line(self, pos: int) -> tuple[int, int]:
        """The start of the line holding `pos` and the offset of the newline ending it."""
        i = bisect_left(self.newlines, pos)
        return (self.newlines[i - 1] + 1 if i else 0,
                self.newlines[i] if i < len(self.newlines) else len(self.text))

    def blank_before(self, start: int) -> bool:
        """Nothing but blanks between the start of the line and `start`."""
        line_start, line_end = self.line(start)
        if line_start not in self.first_text:
            found = _NONSPACE.search(self.text, line_start, line_end)
            self.first_text[line_start] = found.start() if found else line_end
        return self.first_text[line_start] >= start

    def rest_first(self, pos: int) -> str:
        """The first character that is not a blank in the rest of the line from `pos`,
        expressions removed (`_EXPR.sub("", rest).lstrip()[:1]`)."""
        line_end = self.line(pos)[1]
        chain, value = [], ""
        while pos not in self.rest:
            chain.append(pos)
            following = next(self.expressions(pos, line_end), None)
            found = _NONSPACE.search(self.text, pos, following[0] if following else line_end)
            if found or following is None:
                value = found[0] if found else ""
                break
            pos = following[1]
        else:
            value = self.rest[pos]
        for at in chain:
            self.rest[at] = value
        return value

    def inside_quotes(self, line_start: int, start: int) -> bool:
        """An odd number of `"` or of `'` between the start of the line and `start`."""
        at_line, at, double, single = self.quotes
        if at_line != line_start or at > start:
            at, double, single = line_start, 0, 0
        double += self.text.count('"', at, start)
        single += self.text.count("'", at, start)
        self.quotes = (line_start, start, double, single)
        return double % 2 == 1 or single % 2 == 1

    def loop_end(self, start: int) -> int | None:
        """The end of the `end` that closes the loop opening at `start`, when it is on the
        same line: the loop renders a list of values there, which stands as one value.
        The line is read once: what closes each block opened on it is kept."""
        if start in self.loop_ends:
            return self.loop_ends[start]
        text, line_end = self.text, self.line(start)[1]
        depth, result, opened = 0, None, []
        for first, last in self.expressions(start, line_end):
            expr = text[first:last]
            if _OPEN.match(expr):
                depth += 1
                opened.append(first)
            elif _CLOSE.match(expr):
                depth -= 1
                if opened:
                    self.loop_ends[opened.pop()] = last
                if depth == 0 and result is None:
                    result = last
        for first in opened:
            self.loop_ends[first] = None
        self.loop_ends[start] = result
        return result


def _blank(piece: str) -> str:
    return re.sub(r"[^\n]", " ", piece)


_OPEN = lazy(r"^(?:\{\{-?\s*(?:if|range|with|define|block)\b|\{%-?\s*(?:if|for|macro|block)\b)")
_ALTERNATIVE = lazy(r"^(?:\{\{-?\s*else\b|\{%-?\s*(?:else|elif)\b)")
_CLOSE = lazy(r"^(?:\{\{-?\s*end\b|\{%-?\s*end\w*)")


def _is_statement(expr: str) -> bool:
    """Control flow and comments produce no text of their own: they become blanks."""
    return (expr.startswith(("{%", "{#")) or bool(_OPEN.match(expr) or _ALTERNATIVE.match(expr)
            or _CLOSE.match(expr)) or expr.lstrip("{- ").startswith("/*"))


_RANGE = lazy(r"^(?:\{\{-?\s*range\b|\{%-?\s*for\b)")


def _inline_loop(piece: str) -> bool:
    """A whole loop written within one line (`[{{range .X}}{{.}}, {{end}}]`)."""
    return bool(_RANGE.match(piece)) and "\n" not in piece and piece.count("{") > 2


def _pieces(scan: _Scan):
    """(start, end, dead) for each expression, and for each stretch of text inside an
    `else`/`elif` branch: only the first branch of a conditional is kept, so the
    alternatives (often the same key twice) do not collide. A loop within one line
    is one piece."""
    depth, dead_from, dead_depth, skip_to = 0, None, None, 0
    text = scan.text
    for match_start, match_end in scan.expressions():
        if match_start < skip_to:
            continue
        expr = text[match_start:match_end]
        loop_end = scan.loop_end(match_start) if _RANGE.match(expr) and dead_from is None else None
        if loop_end is not None:
            skip_to = loop_end
            yield match_start, loop_end, False
            continue
        if _OPEN.match(expr):
            depth += 1
        elif _ALTERNATIVE.match(expr) and dead_from is None:
            dead_from, dead_depth = match_start, depth
        elif _CLOSE.match(expr):
            if dead_from is not None and depth == dead_depth:
                yield dead_from, match_end, True
                dead_from = dead_depth = None
                depth -= 1
                continue
            depth = max(0, depth - 1)
        if dead_from is None:
            yield match_start, match_end, False
    if dead_from is not None:
        yield dead_from, len(text), True


def _replacement(scan: _Scan, start: int, end: int) -> str:
    text = scan.text
    expr = text[start:end]
    if "\n" in expr:
        return re.sub(r"[^\n]", " ", expr)
    line_start = scan.line(start)[0]
    rest = scan.rest_first(end)  # a closing `{{ end }}` after the value renders nothing
    if scan.blank_before(start) and not rest:
        return " " * len(expr)
    if scan.inside_quotes(line_start, start):
        return "x" * len(expr)
    before_last = start  # the last character before the expression that is not a blank
    while before_last > line_start and text[before_last - 1].isspace():
        before_last -= 1
    standalone_value = (
        (start == line_start or text[start - 1] in " \t[,=")
        and text[before_last - 1:before_last] in ("=", ":", "[", ",", "-") and before_last > line_start
        and (not rest or rest in ",]}#")
    )
    if standalone_value:
        return '"' + "x" * (len(expr) - 2) + '"'
    return "x" * len(expr)


def is_placeholder(value: object) -> bool:
    """True for a value that stood for a template expression before neutralising."""
    # asked of every scalar many rules read: no set built for a value that cannot be one
    return isinstance(value, str) and len(value) >= 2 and value[0] == "x" and not value.strip("x")


# `{{ template "base" . }}` on a line of its own: k3s/RKE2 render their whole default
# config there, with `version` and the runtimes k3s detected on the node
_INCLUDE = lazy(r"^[ \t]*\{\{-?\s*template\b", re.MULTILINE)


def includes_template(doc) -> bool:
    """Whether a templated file renders another template's content, which gpulint cannot see."""
    return doc.templated and bool(_INCLUDE.search(doc.text))
