"""SARIF 2.1.0: one run, the full rule catalog, results with regions, fixes,
inline suppressions and related locations."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

from gpulint import __version__, catalog
from gpulint.report.edits import EditLocator

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_BASE = "%SRCROOT%"


def _uri(path: str) -> str:
    return quote(path.replace(os.sep, "/"), safe="/.-_~")


def _help_markdown(rule) -> str:
    parts = [f"**{rule.code} {rule.slug}**: {rule.summary}", "", "## Why is this bad?", rule.why,
             "", "## Fix", rule.fix]
    for title, example in (("Example", rule.bad), ("Use instead", rule.good)):
        parts += ["", f"## {title}"]
        for path, content in example.files:
            parts += [f"`{path}`", "```", content.rstrip("\n"), "```"]
    if rule.references:
        parts += ["", "## References"] + [f"- <{url}>" for url in rule.references]
    return "\n".join(parts)


def descriptor(rule) -> dict:
    out = {
        "id": rule.code,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.summary},
        "help": {"text": f"{rule.why}\n\nFix: {rule.fix}", "markdown": _help_markdown(rule)},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": list(rule.kinds), "precision": "high",
                       "stability": rule.stability},
    }
    if rule.references:
        out["helpUri"] = rule.references[0]
    return out


def _region(line: int, column: int, end_line: int, end_column_exclusive: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line,
            "endColumn": max(end_column_exclusive, column if end_line > line else column)}


def _location(path: str, region: dict) -> dict:
    return {"physicalLocation": {"artifactLocation": {"uri": _uri(path), "uriBaseId": _BASE},
                                 "region": region}}


def _fingerprint(f, line_text: str) -> str:
    key = "\0".join((f.code, f.path, line_text.strip(), f.message))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def render(result, findings) -> str:
    rules = catalog.load_catalog()
    order = list(rules)
    index_of = {code: i for i, code in enumerate(order)}
    locate = EditLocator(result.documents)
    docs = {d.path: d for d in result.documents}
    results = []
    for f in findings:
        doc = docs.get(f.path)
        line_text = doc.line_text(f.span.line) if doc else ""
        item = {
            "ruleId": f.code,
            "ruleIndex": index_of[f.code],
            "level": _LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [_location(f.path, _region(f.span.line, f.span.column, f.span.end_line,
                                                    f.span.end_column + 1))],
            "partialFingerprints": {"gpulint/v1": _fingerprint(f, line_text)},
        }
        if f.fix is not None:
            changes: dict[str, list] = {}
            for edit in f.fix.edits:
                path, line, column, end_line, end_column = locate.region(edit)
                changes.setdefault(path, []).append({
                    "deletedRegion": {"startLine": line, "startColumn": column,
                                      "endLine": end_line, "endColumn": end_column},
                    "insertedContent": {"text": edit.content},
                })
            item["fixes"] = [{
                "description": {"text": f.fix.description},
                "artifactChanges": [{"artifactLocation": {"uri": _uri(p), "uriBaseId": _BASE},
                                     "replacements": reps} for p, reps in changes.items()],
            }]
        if f.suppressed is not None:
            suppression = {"kind": "inSource"}
            if f.suppressed:
                suppression["justification"] = f.suppressed
            item["suppressions"] = [suppression]
        if f.related:
            item["relatedLocations"] = [
                dict(_location(r.path, {"startLine": r.line, "startColumn": r.column}),
                     id=i, message={"text": r.message})
                for i, r in enumerate(f.related)
            ]
        results.append(item)
    root = Path.cwd().as_uri().rstrip("/") + "/"
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gpulint",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [descriptor(rules[code]) for code in order],
            }},
            "originalUriBaseIds": {_BASE: {"uri": root}},
            "invocations": [{"executionSuccessful": not result.internal_errors}],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"
