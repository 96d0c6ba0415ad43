"""GitHub Actions workflow commands: one annotation per finding."""

from __future__ import annotations

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, findings) -> str:
    out = []
    for f in findings:
        props = ",".join([
            f"file={_prop(f.path)}", f"line={f.span.line}", f"col={f.span.column}",
            f"endLine={f.span.end_line}", f"endColumn={f.span.end_column}",
            f"title={_prop(f'{f.code} {f.slug}')}",
        ])
        out.append(f"::{_LEVEL[f.severity]} {props}::{_data(f.message)}")
    return "".join(line + "\n" for line in out)
