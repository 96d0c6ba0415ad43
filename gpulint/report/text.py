"""Human output: `path:line:col: CODE [severity] message`, the source line with a
caret underline, and a summary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gpulint.model import LineIndex
from gpulint.report.summary import summary

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def lines_of(path: str, docs: dict, others: dict) -> LineIndex | None:
    """The text a finding points into: its document's, or, for a file that is not a
    linted document (the configuration), the file read once."""
    doc = docs.get(path)
    if doc is not None:
        return doc.index if doc.text else None
    if path not in others:
        try:
            text = Path(path).read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError):
            text = ""
        others[path] = LineIndex(text) if text else None
    return others[path]


def _source(f, index: LineIndex | None, color: bool) -> list[str]:
    if index is None:
        return []
    line = index.line_text(f.span.line)
    if not line.strip():
        return []
    width = len(str(f.span.line))
    start = max(1, f.span.column)
    end = f.span.end_column if f.span.end_line == f.span.line else len(line)
    end = max(start, min(end, len(line)))
    gutter = " " * width + " |"
    caret = " " * (start - 1) + "^" * (end - start + 1)
    expanded = line.replace("\t", " ")
    return [
        _paint(gutter, _DIM, color),
        _paint(f"{f.span.line} |", _DIM, color) + " " + expanded,
        _paint(gutter, _DIM, color) + " " + _paint(caret, _COLORS[f.severity], color),
    ]


def finding_lines(findings, documents, *, show_source: bool = True, color: bool = False) -> list[str]:
    """Each finding as `path:line:col: CODE [severity] message`, its source and notes."""
    return [line for lines in finding_blocks(findings, documents, show_source=show_source, color=color)
            for line in lines]


def finding_blocks(findings, documents, *, show_source: bool = True, color: bool = False) -> Iterator[list[str]]:
    """finding_lines, finding by finding."""
    docs = {d.path: d for d in documents}
    others: dict = {}
    for f in findings:
        lines: list[str] = []
        head = f"{f.path}:{f.span.line}:{f.span.column}:"
        level = _paint(f"[{f.severity}]", _COLORS[f.severity], color)
        note = "" if f.suppressed is None else \
            f" (suppressed inline{': ' + f.suppressed if f.suppressed else ''})"
        lines.append(f"{_paint(head, _BOLD, color)} {_paint(f.code, _BOLD, color)} {level} "
                     f"{f.message}{note}")
        if show_source:
            lines.extend(_source(f, lines_of(f.path, docs, others), color))
        if f.fix is not None:
            kind = "fix" if f.fix.safe else "unsafe fix (--unsafe-fixes)"
            lines.append(f"  = {kind}: {f.fix.description}")
        for rel in f.related:
            lines.append(f"  = see {rel.path}:{rel.line}:{rel.column}: {rel.message}")
        if show_source:
            lines.append("")
        yield lines


def _fixable(s: dict, unsafe_fixes: bool) -> str:
    """ruff's wording: unsafe fixes count for --fix only when --unsafe-fixes is given."""
    if unsafe_fixes:
        count = s["fixable"] + s["unsafe_fixable"]
        return f" {count} fixable with --fix --unsafe-fixes." if count else ""
    text = f" {s['fixable']} fixable with --fix." if s["fixable"] else ""
    if s["unsafe_fixable"]:
        text += f" {s['unsafe_fixable']} more with --unsafe-fixes."
    return text


def summary_line(result, fixed: int = 0, unsafe_fixes: bool = False) -> str:
    s = summary(result)
    parts = [f"{s[key]} {name}{'' if s[key] == 1 else 's'}"
             for key, name in (("errors", "error"), ("warnings", "warning"), ("infos", "info"))
             if s[key]]
    files = f"{s['files_checked']} file{'' if s['files_checked'] == 1 else 's'} checked"
    if s["files_not_checked"]:
        files += f", {s['files_not_checked']} not checked"
    if s["files_skipped"]:
        files += f", {s['files_skipped']} skipped"
    if s["findings"]:
        text = f"Found {s['findings']} finding{'' if s['findings'] == 1 else 's'} " \
               f"({', '.join(parts)}) in {files}."
        text += _fixable(s, unsafe_fixes)
    elif s["files_not_checked"]:  # never "passed" while a file was left unchecked
        text = f"No findings, but not every file was checked: {files}."
    else:
        text = f"All checks passed: {files}."
    if fixed:
        text += f" Fixed {fixed} finding{'' if fixed == 1 else 's'}."
    if s["suppressed"]:
        text += f" {s['suppressed']} suppressed inline."
    if s["baselined"]:
        text += f" {s['baselined']} known from the baseline."
    return text


def render(result, findings, *, show_source: bool = True, color: bool = False, fixed: int = 0,
           unsafe_fixes: bool = False, quiet: bool = False) -> str:
    return "".join(pieces(result, findings, show_source=show_source, color=color, fixed=fixed,
                          unsafe_fixes=unsafe_fixes, quiet=quiet))


def pieces(result, findings, *, show_source: bool = True, color: bool = False, fixed: int = 0,
           unsafe_fixes: bool = False, quiet: bool = False) -> Iterator[str]:
    """The report finding by finding, then its summary line."""
    for lines in finding_blocks(findings, result.documents, show_source=show_source, color=color):
        yield "".join(line + "\n" for line in lines)
    if not quiet:
        yield summary_line(result, fixed, unsafe_fixes) + "\n"


def fixes_listing(fixed: dict) -> str:
    """ruff's --show-fixes: what --fix changed, per file and rule."""
    from gpulint import catalog

    rules = catalog.load_catalog()
    total = sum(fixed.values())
    lines = [f"Fixed {total} finding{'' if total == 1 else 's'}:"]
    current = None
    for (path, code), count in fixed.items():
        if path != current:
            lines.append(f"- {path}:")
            current = path
        lines.append(f"    {count} × {code} ({rules[code].slug})")
    return "\n".join(lines) + "\n"
