"""Neutralising template expressions (Helm/Go `{{ }}`, Jinja `{% %}`) so a templated
file can still be parsed, with every position left where it was written."""

from __future__ import annotations

import re

_EXPR = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
TEMPLATE_SUFFIXES = (".tmpl", ".tpl", ".j2", ".jinja", ".jinja2", ".gotmpl")


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
        silent = dead or _is_statement(piece)
        out.append(_blank(piece) if silent else _replacement(text, start, end))
        last = end
    out.append(text[last:])
    return "".join(out)


def _blank(piece: str) -> str:
    return re.sub(r"[^\n]", " ", piece)


_OPEN = re.compile(r"^(?:\{\{-?\s*(?:if|range|with|define|block)\b|\{%-?\s*(?:if|for|macro|block)\b)")
_ALTERNATIVE = re.compile(r"^(?:\{\{-?\s*else\b|\{%-?\s*(?:else|elif)\b)")
_CLOSE = re.compile(r"^(?:\{\{-?\s*end\b|\{%-?\s*end\w*)")


def _is_statement(expr: str) -> bool:
    """Control flow and comments produce no text of their own: they become blanks."""
    return (expr.startswith(("{%", "{#")) or bool(_OPEN.match(expr) or _ALTERNATIVE.match(expr)
            or _CLOSE.match(expr)) or expr.lstrip("{- ").startswith("/*"))


def _pieces(text: str):
    """(start, end, dead) for each expression, and for each stretch of text inside an
    `else`/`elif` branch: only the first branch of a conditional is kept, so the
    alternatives (often the same key twice) do not collide."""
    depth, dead_from, dead_depth = 0, None, None
    for match in _EXPR.finditer(text):
        expr = match.group(0)
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
    standalone_value = (
        (not before or before[-1] in " \t[,=")
        and before.rstrip()[-1:] in ("=", ":", "[", ",", "-")
        and (not after.strip() or after.lstrip()[0] in ",]}#")
    )
    if standalone_value:
        return '"' + "x" * (len(expr) - 2) + '"'
    return "x" * len(expr)


def is_placeholder(value: object) -> bool:
    """True for a value that stood for a template expression before neutralising."""
    return isinstance(value, str) and len(value) >= 2 and set(value) == {"x"}


def _inside_quotes(before: str) -> bool:
    return before.count('"') % 2 == 1 or before.count("'") % 2 == 1
