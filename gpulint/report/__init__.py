"""Output formats, all rendered from the same Result."""

from __future__ import annotations

FORMATS = ("text", "json", "sarif", "github")


def render(fmt: str, result, *, show_source: bool = True, color: bool = False,
           fixed: int = 0) -> str:
    if fmt == "json":
        from gpulint.report.jsonfmt import render as r
        return r(result)
    if fmt == "sarif":
        from gpulint.report.sarif import render as r
        return r(result)
    if fmt == "github":
        from gpulint.report.github import render as r
        return r(result)
    from gpulint.report.text import render as r
    return r(result, show_source=show_source, color=color, fixed=fixed)
