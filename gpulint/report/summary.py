"""Counts shared by the text and JSON reports."""

from __future__ import annotations

from collections import Counter


def summary(result) -> dict:
    active = result.active
    by_severity = Counter(f.severity for f in active)
    return {
        "findings": len(active),
        "errors": by_severity.get("error", 0),
        "warnings": by_severity.get("warning", 0),
        "infos": by_severity.get("info", 0),
        "fixable": sum(1 for f in active if f.fix is not None and f.fix.safe),
        "unsafe_fixable": sum(1 for f in active if f.fix is not None and not f.fix.safe),
        "suppressed": len(result.findings) - len(active),
        "baselined": getattr(result, "baselined", 0),
        "files_checked": result.files_checked,
        "files_skipped": result.files_skipped,
        "files_not_checked": getattr(result, "files_not_checked", 0),
    }
