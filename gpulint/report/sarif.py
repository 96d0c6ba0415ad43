"""SARIF 2.1.0 for GitHub code scanning and editors: one run, the full rule catalog,
results with regions, safe fixes and related locations linked from the message.

What GitHub reads (docs.github.com, "SARIF support for code scanning"):
`partialFingerprints.primaryLocationLineHash` to follow an alert across commits,
`relatedLocations` only when the message links them as `[text](id)`,
`properties.security-severity` and the `security` tag on rules, and
`runAutomationDetails.id` for the category.

Paths are relative to the repository root (`%SRCROOT%`, given in `originalUriBaseIds`), which
is where code scanning resolves them: a CI step that runs in a `working-directory:` still
places its alerts on the right files. Fingerprints use the same paths.
"""

from __future__ import annotations

import json

from gpulint import HOMEPAGE, __version__, catalog
from gpulint.report import sarif_limits as limits
from gpulint.report.edits import EditLocator
from gpulint.report.fingerprint import fingerprints, line_text_of
from gpulint.report.roots import BASE, ReportRoot, report_root
from gpulint.ruledoc import verified_words

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def help_uri(code: str) -> str:
    return f"{HOMEPAGE}/blob/main/docs/rules/{code}.md"


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
    tags = list(rule.kinds)
    properties = {"tags": tags, "precision": "high", "stability": rule.stability}
    if rule.verified:
        properties["verified"] = verified_words(rule)
    if rule.security_severity:
        tags.append("security")
        properties["security-severity"] = rule.security_severity
    return {
        "id": rule.code,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.summary},
        "help": {"text": f"{rule.why}\n\nFix: {rule.fix}", "markdown": _help_markdown(rule)},
        "helpUri": help_uri(rule.code),
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": properties,
    }


def _region(line: int, column: int, end_line: int, end_column_exclusive: int) -> dict:
    return {"startLine": line, "startColumn": column, "endLine": end_line,
            "endColumn": max(end_column_exclusive, column if end_line > line else column)}


def _location(path: str, region: dict, where: ReportRoot) -> dict:
    return {"physicalLocation": {"artifactLocation": where.location(path), "region": region}}


def _escape(text: str) -> str:
    """Plain text inside a message that embeds links: brackets are literal (SARIF 3.11.6)."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _message(f, where: ReportRoot | None = None) -> dict:
    if not f.related:
        return {"text": f.message}
    name = where.key if where is not None else (lambda path: path)
    links = ", ".join(f"[{_escape(f'{name(r.path)}:{r.line}')}]({i})" for i, r in enumerate(f.related))
    return {"text": f"{_escape(f.message)} (see {links})"}


def _fixes(f, locate, where) -> list[dict]:
    changes: dict[str, list] = {}
    for edit in f.fix.edits:
        path, line, column, end_line, end_column = locate.region(edit)
        changes.setdefault(path, []).append({
            "deletedRegion": {"startLine": line, "startColumn": column,
                              "endLine": end_line, "endColumn": end_column},
            "insertedContent": {"text": edit.content},
        })
    return [{
        "description": {"text": f.fix.description},
        "artifactChanges": [{"artifactLocation": where.location(p), "replacements": reps} for p, reps in changes.items()],
    }]


def _result(f, index_of, locate, prints, where) -> dict:
    item = {
        "ruleId": f.code,
        "ruleIndex": index_of[f.code],
        "level": _LEVEL[f.severity],
        "message": _message(f, where),
        "locations": [_location(f.path, _region(f.span.line, f.span.column, f.span.end_line,
                                                f.span.end_column + 1), where)],
        "partialFingerprints": prints,
    }
    if f.fix is not None and f.fix.safe:
        item["fixes"] = _fixes(f, locate, where)
    elif f.fix is not None:  # editors apply `fixes` without asking: an unsafe one is only named
        item["properties"] = {"unsafeFix": f"{f.fix.description} (gpulint --fix --unsafe-fixes)"}
    if f.suppressed is not None:
        suppression = {"kind": "inSource"}
        if f.suppressed:
            suppression["justification"] = f.suppressed
        item["suppressions"] = [suppression]
    if f.related:
        item["relatedLocations"] = [
            dict(_location(r.path, {"startLine": r.line, "startColumn": r.column}, where),
                 id=i, message={"text": r.message})
            for i, r in enumerate(f.related[:limits.MAX_LOCATIONS])
        ]
        if len(f.related) > limits.MAX_LOCATIONS:  # GitHub rejects a result with more
            item.setdefault("properties", {})["relatedLocationsLeftOut"] = len(f.related) - limits.MAX_LOCATIONS
    return item


def _invocation(result) -> dict:
    invocation = {"executionSuccessful": not result.internal_errors}
    if result.internal_errors:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "descriptor": {"id": "internal-error"},
             "message": {"text": message}} for message in result.internal_errors]
    return invocation


def render(result, findings, notes: list[str] | None = None) -> str:
    """The SARIF log, within what GitHub code scanning accepts; `notes` gets a line for
    stderr when results were left out, or when GitHub will not show them all."""
    rules = catalog.load_catalog()
    order = list(rules)
    index_of = {code: i for i, code in enumerate(order)}
    locate = EditLocator(result.documents)
    where = ReportRoot(report_root(result, findings))
    kept = limits.most_severe(findings, limits.MAX_RESULTS)
    prints = fingerprints(kept, line_text_of(result), path_of=lambda f: where.key(f.path))
    results = [_result(f, index_of, locate, p, where) for f, p in zip(kept, prints)]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gpulint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": HOMEPAGE,
                "rules": [descriptor(rules[code]) for code in order],
            }},
            "automationDetails": {"id": "gpulint/"},
            "columnKind": "unicodeCodePoints",
            "originalUriBaseIds": {BASE: {"uri": where.base_uri}},
            "invocations": [_invocation(result)],
            "results": results,
        }],
    }
    why = f"GitHub code scanning accepts {limits.MAX_RESULTS:,} results per run"
    text = _dumps(log, findings, kept, why)
    size = limits.gzipped_size(text)
    while size > limits.MAX_GZIPPED_BYTES and results:
        # the least severe go; the results kept are not rendered again
        count = limits.fewer(len(results), size)
        chosen = set(map(id, limits.most_severe(kept, count)))
        pairs = [(f, r) for f, r in zip(kept, results) if id(f) in chosen]
        kept, results = [f for f, _ in pairs], [r for _, r in pairs]
        log["runs"][0]["results"] = results
        why = f"GitHub code scanning accepts {limits.MAX_GZIPPED_BYTES // 1000 // 1000} MB per file, gzipped"
        text = _dumps(log, findings, kept, why)
        size = limits.gzipped_size(text)
    if len(kept) < len(findings) and notes is not None:
        notes.append(f"sarif: {limits.left_out_text(len(findings) - len(kept), len(findings), why)}")
    elif len(kept) > limits.SHOWN_RESULTS and notes is not None:
        notes.append(limits.shown_note(len(kept)))
    return text


def _dumps(log: dict, findings: list, kept: list, why: str) -> str:
    """The log as text, with a notification naming what was left out, if anything was."""
    invocation = log["runs"][0]["invocations"][0]
    notifications = [n for n in invocation.get("toolExecutionNotifications", ())
                     if n["descriptor"]["id"] != "results-left-out"]
    if len(kept) < len(findings):
        notifications.append({"level": "warning", "descriptor": {"id": "results-left-out"},
                              "message": {"text": limits.left_out_text(len(findings) - len(kept),
                                                                       len(findings), why)}})
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return json.dumps(log, indent=2) + "\n"
