"""Neutralising template expressions (Helm/Go `{{ }}`, Jinja `{% %}`) so a templated
file can still be parsed, with every position left where it was written."""

from __future__ import annotations

import re

from gpulint.regex import lazy

_EXPR = lazy(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
TEMPLATE_SUFFIXES = (".tmpl", ".tpl", ".j2", ".jinja", ".jinja2", ".gotmpl")


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
    out, last = [], 0
    for start, end, dead in _pieces(text):
        out.append(text[last:start])
        piece = text[start:end]
        silent = dead or (_is_statement(piece) and not _inline_loop(piece))
        out.append(_blank(piece) if silent else _replacement(text, start, end))
        last = end
    out.append(text[last:])
    return "".join(out)


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


def _loop_end(text: str, start: int) -> int | None:
    """The end of the `end` that closes the loop opening at `start`, when it is on the
    same line: the loop renders a list of values there, which stands as one value."""
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    depth = 0
    for match in _EXPR.finditer(text, start, line_end):
        expr = match.group(0)
        if _OPEN.match(expr):
            depth += 1
        elif _CLOSE.match(expr):
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def _pieces(text: str):
    """(start, end, dead) for each expression, and for each stretch of text inside an
    `else`/`elif` branch: only the first branch of a conditional is kept, so the
    alternatives (often the same key twice) do not collide. A loop within one line
    is one piece."""
    depth, dead_from, dead_depth, skip_to = 0, None, None, 0
    for match in _EXPR.finditer(text):
        if match.start() < skip_to:
            continue
        expr = match.group(0)
        loop_end = _loop_end(text, match.start()) if _RANGE.match(expr) and dead_from is None else None
        if loop_end is not None:
            skip_to = loop_end
            yield match.start(), loop_end, False
            continue
        if _OPEN.match(expr):
            depth += 1
        elif _ALTERNATIVE.match(expr) and dead_from is None:
            dead_from, dead_depth = match.start(), depth
        elif _CLOSE.match(expr):
            if dead_from is not None and depth == dead_depth:
                yield dead_from, match.end(), True
                dead_from = dead_depth = None
                depth -= 1
                continue
            depth = max(0, depth - 1)
        if dead_from is None:
            yield match.start(), match.end(), False
    if dead_from is not None:
        yield dead_from, len(text), True


def _replacement(text: str, start: int, end: int) -> str:
    expr = text[start:end]
    if "\n" in expr:
        return re.sub(r"[^\n]", " ", expr)
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:start], text[end:line_end]
    if not before.strip() and not _EXPR.sub("", after).strip():
        return " " * len(expr)
    if _inside_quotes(before):
        return "x" * len(expr)
    rest = _EXPR.sub("", after)  # a closing `{{ end }}` after the value renders nothing
    standalone_value = (
        (not before or before[-1] in " \t[,=")
        and before.rstrip()[-1:] in ("=", ":", "[", ",", "-")
        and (not rest.strip() or rest.lstrip()[0] in ",]}#")
    )
    if standalone_value:
        return '"' + "x" * (len(expr) - 2) + '"'
    return "x" * len(expr)


def is_placeholder(value: object) -> bool:
    """True for a value that stood for a template expression before neutralising."""
    return isinstance(value, str) and len(value) >= 2 and set(value) == {"x"}


def _inside_quotes(before: str) -> bool:
    return before.count('"') % 2 == 1 or before.count("'") % 2 == 1


# `{{ template "base" . }}` on a line of its own: k3s/RKE2 render their whole default
# config there, with `version` and the runtimes k3s detected on the node
_INCLUDE = lazy(r"^[ \t]*\{\{-?\s*template\b", re.MULTILINE)


def includes_template(doc) -> bool:
    """Whether a templated file renders another template's content, which gpulint cannot see."""
    return doc.templated and bool(_INCLUDE.search(doc.text))
