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
    for match in _EXPR.finditer(text):
        start, end = match.span()
        out.append(text[last:start])
        out.append(_replacement(text, start, end))
        last = end
    out.append(text[last:])
    return "".join(out)


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
