"""Formats CI systems read: JUnit XML (test reports), GitLab Code Quality,
Checkstyle XML, and JSON Lines (one finding per line, for pipes)."""

from __future__ import annotations

import json
from itertools import groupby
from xml.sax.saxutils import quoteattr

from gpulint.regex import lazy
from gpulint.report.fingerprint import OWN, fingerprints, line_text_of

# GitLab Code Quality severities: info, minor, major, critical, blocker
_GITLAB = {"error": "major", "warning": "minor", "info": "info"}


def _by_path(findings):
    return [(path, list(group)) for path, group in
            groupby(sorted(findings, key=lambda f: (f.path, f.sort_key)), key=lambda f: f.path)]


def junit(result, findings) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="gpulint" tests="{max(len(findings), 1)}" failures="{len(findings)}">']
    if not findings:
        lines += ['  <testsuite name="gpulint" tests="1" failures="0">',
                  '    <testcase name="no findings" classname="gpulint"/>', "  </testsuite>"]
    for path, group in _by_path(findings):
        lines.append(f'  <testsuite name={quoteattr(path)} tests="{len(group)}" failures="{len(group)}">')
        for f in group:
            lines += [f"    <testcase name={quoteattr(f'{f.code} {f.slug}')} classname={quoteattr(path)} "
                      f'file={quoteattr(path)} line="{f.span.line}">',
                      f"      <failure message={_attr(f.message)} type={quoteattr(f.severity)}>"
                      f"{_text(f'{path}:{f.span.line}:{f.span.column}: {f.code} {f.message}')}</failure>",
                      "    </testcase>"]
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


# characters XML 1.0 cannot carry, even escaped (a message may quote a file's bytes)
_NOT_XML = lazy("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", value))


def gitlab(result, findings) -> str:
    prints = fingerprints(findings, line_text_of(result))
    return json.dumps([{
        "description": f"{f.code} {f.message}",
        "check_name": f"{f.code} {f.slug}",
        "fingerprint": p[OWN],
        "severity": _GITLAB[f.severity],
        "location": {"path": f.path, "positions": {
            "begin": {"line": f.span.line, "column": f.span.column},
            "end": {"line": f.span.end_line, "column": f.span.end_column}}},
    } for f, p in zip(findings, prints)], indent=2) + "\n"


def checkstyle(result, findings) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<checkstyle version="4.3">']
    for path, group in _by_path(findings):
        lines.append(f"  <file name={quoteattr(path)}>")
        lines += [f'    <error line="{f.span.line}" column="{f.span.column}" '
                  f"severity={quoteattr(f.severity)} message={_attr(f.message)} "
                  f"source={quoteattr(f'gpulint.{f.code}')}/>" for f in group]
        lines.append("  </file>")
    lines.append("</checkstyle>")
    return "\n".join(lines) + "\n"


def json_lines(result, findings) -> str:
    return json_lines_of(findings, result.documents)


def json_lines_of(findings, documents) -> str:
    """One JSON object per finding and line: a run streams these file by file."""
    from gpulint.report.edits import EditLocator
    from gpulint.report.jsonfmt import finding_json

    locate = EditLocator(documents)
    return "".join(json.dumps(finding_json(f, locate.json_edits)) + "\n" for f in findings)
