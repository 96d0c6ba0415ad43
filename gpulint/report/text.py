"""Human output: `path:line:col: CODE [severity] message`, the source line with a
caret underline, and a summary."""

from __future__ import annotations

from pathlib import Path

from gpulint.model import LineIndex
from gpulint.report.summary import summary

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def _lines(path: str, docs: dict, others: dict) -> LineIndex | None:
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
    docs = {d.path: d for d in documents}
    others: dict = {}
    lines: list[str] = []
    for f in findings:
        head = f"{f.path}:{f.span.line}:{f.span.column}:"
        level = _paint(f"[{f.severity}]", _COLORS[f.severity], color)
        lines.append(f"{_paint(head, _BOLD, color)} {_paint(f.code, _BOLD, color)} {level} {f.message}")
        if show_source:
            lines.extend(_source(f, _lines(f.path, docs, others), color))
        if f.fix is not None:
            kind = "fix" if f.fix.safe else "unsafe fix (--unsafe-fixes)"
            lines.append(f"  = {kind}: {f.fix.description}")
        for rel in f.related:
            lines.append(f"  = see {rel.path}:{rel.line}:{rel.column}: {rel.message}")
        if show_source:
            lines.append("")
    return lines


def summary_line(result, fixed: int = 0) -> str:
    s = summary(result)
    parts = [f"{s[key]} {name}{'' if s[key] == 1 else 's'}"
             for key, name in (("errors", "error"), ("warnings", "warning"), ("infos", "info"))
             if s[key]]
    files = f"{s['files_checked']} file{'' if s['files_checked'] == 1 else 's'} checked"
    if s["files_skipped"]:
        files += f", {s['files_skipped']} skipped"
    if s["findings"]:
        text = f"Found {s['findings']} finding{'' if s['findings'] == 1 else 's'} " \
               f"({', '.join(parts)}) in {files}."
        if s["fixable"]:
            text += f" {s['fixable']} fixable with --fix."
    else:
        text = f"All checks passed: {files}."
    if fixed:
        text += f" Fixed {fixed} finding{'' if fixed == 1 else 's'}."
    if s["suppressed"]:
        text += f" {s['suppressed']} suppressed inline."
    return text


def render(result, *, show_source: bool = True, color: bool = False, fixed: int = 0) -> str:
    lines = finding_lines(result.active, result.documents, show_source=show_source, color=color)
    lines.append(summary_line(result, fixed))
    return "\n".join(lines) + "\n"
