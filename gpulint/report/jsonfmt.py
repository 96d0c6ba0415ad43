"""The JSON report: a stable contract documented in README.md ("JSON output")."""

from __future__ import annotations

import json

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


def render(result, findings) -> str:
    from gpulint.report.edits import EditLocator

    locate = EditLocator(result.documents)
    payload = {
        "version": JSON_VERSION,
        "tool": {"name": "gpulint", "version": __version__},
        "findings": [finding_json(f, locate.json_edits) for f in findings],
        "summary": summary(result),
    }
    return json.dumps(payload, indent=2) + "\n"
