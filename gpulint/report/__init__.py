"""Output formats, all rendered from the same Result.

Findings silenced inline are left out of every format, as ruff leaves out `noqa`
ones (GitHub code scanning would open alerts for SARIF `suppressions`);
`--show-suppressed` brings them back, marked.

Imports inside functions: a run loads only the format it writes.
"""

from __future__ import annotations

from collections.abc import Iterator

FORMATS = ("text", "json", "json-lines", "sarif", "github", "junit", "gitlab", "checkstyle")
_CI = {"junit": "junit", "gitlab": "gitlab", "checkstyle": "checkstyle", "json-lines": "json_lines"}


def shown(result, show_suppressed: bool) -> list:
    return result.findings if show_suppressed else result.active


def render(fmt: str, result, *, show_source: bool = True, color: bool = False,
           fixed: int = 0, unsafe_fixes: bool = False, show_suppressed: bool = False,
           quiet: bool = False, notes: list[str] | None = None) -> str:
    """The report in `fmt`; `notes` gets the lines for stderr a format has (what a SARIF file
    left out to stay within GitHub's limits)."""
    return "".join(pieces(fmt, result, show_source=show_source, color=color, fixed=fixed,
                          unsafe_fixes=unsafe_fixes, show_suppressed=show_suppressed, quiet=quiet,
                          notes=notes))


def pieces(fmt: str, result, *, show_source: bool = True, color: bool = False,
           fixed: int = 0, unsafe_fixes: bool = False, show_suppressed: bool = False,
           quiet: bool = False, notes: list[str] | None = None) -> Iterator[str]:
    """The report in `fmt`, in pieces to write one after the other: the JSON and text reports
    finding by finding, so a large run never holds its whole report in memory (a SARIF file is
    made whole: GitHub's size limit is judged on the whole file). `notes` is complete once the
    pieces are all taken."""
    findings = shown(result, show_suppressed)
    if fmt == "json":
        from gpulint.report.jsonfmt import pieces as p
        yield from p(result, findings)
        return
    if fmt == "text":
        from gpulint.report.text import pieces as p
        yield from p(result, findings, show_source=show_source, color=color, fixed=fixed,
                     unsafe_fixes=unsafe_fixes, quiet=quiet)
        return
    yield _whole(fmt, result, findings, notes)


def _whole(fmt: str, result, findings, notes: list[str] | None) -> str:
    if fmt == "sarif":
        from gpulint.report.sarif import render as r
        return r(result, findings, notes)
    if fmt in _CI:
        from gpulint.report import ci

        return getattr(ci, _CI[fmt])(result, [f for f in findings if f.suppressed is None])
    if fmt == "github":
        from gpulint.report.github import render as r
        return r(result, [f for f in findings if f.suppressed is None])  # an annotation is open
    raise ValueError(f"unknown report format {fmt!r}")
