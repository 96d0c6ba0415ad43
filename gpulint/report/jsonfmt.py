"""The JSON report: a stable contract documented in README.md ("JSON output")."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint import __version__
from gpulint.report.summary import summary

JSON_VERSION = 1


def finding_json(f, edits_of) -> dict:
    out = {
        "code": f.code,
        "slug": f.slug,
        "severity": f.severity,
        "path": f.path,
        "line": f.span.line,
        "column": f.span.column,
        "end_line": f.span.end_line,
        "end_column": f.span.end_column,
        "message": f.message,
        "fix": None if f.fix is None else {
            "description": f.fix.description,
            "safe": f.fix.safe,
            "edits": edits_of(f.fix),
        },
        "related": [{"path": r.path, "line": r.line, "column": r.column, "message": r.message}
                    for r in f.related],
    }
    if f.suppressed is not None:  # only with --show-suppressed
        out["suppressed"] = {"reason": f.suppressed or None}
    return out


# what json.dumps writes a str with, from the C module itself: a report of plain values
# imports no `json` (its decoder and scanner come with it)
try:
    from _json import encode_basestring_ascii as _STRING
except ImportError:  # an interpreter without the C accelerator
    from json.encoder import encode_basestring_ascii as _STRING


def dumps(value, indent: str = "") -> str:
    """`json.dumps(value, indent=2)` with each new line starting with `indent` too, written
    directly: the standard library's indented encoder is pure Python and, at one call per
    finding, most of the time of a report of many findings."""
    if isinstance(value, str):
        return _STRING(value)
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    inner = indent + "  "
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        if not value:
            return "{}"
        return "{\n" + ",\n".join(f"{inner}{_STRING(key)}: {dumps(item, inner)}" for key, item in value.items()) \
            + "\n" + indent + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + dumps(item, inner) for item in value) + "\n" + indent + "]"
    import json  # floats, other keys: as json writes them

    return json.dumps(value, indent=2).replace("\n", "\n" + indent)


def render(result, findings) -> str:
    return "".join(pieces(result, findings))


def pieces(result, findings) -> Iterator[str]:
    """The report in pieces, one per finding: the bytes `json.dumps(report, indent=2)` gives
    for the whole, without the whole in memory."""
    from gpulint.report.edits import EditLocator

    locate = EditLocator(result.documents)
    head = dumps({"version": JSON_VERSION, "tool": {"name": "gpulint", "version": __version__}})
    yield head[:-2] + ',\n  "findings": ['  # without its closing "\n}"
    first = True
    for f in findings:
        item = dumps(finding_json(f, locate.json_edits), "    ")
        yield ("\n    " if first else ",\n    ") + item
        first = False
    yield ("]" if first else "\n  ]") + ',\n  "summary": ' \
        + dumps(summary(result), "  ") + "\n}\n"
