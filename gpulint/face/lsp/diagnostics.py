"""Findings as LSP diagnostics: code, severity, a link to the rule's page, related locations
in other files, and the `unnecessary` tag on an unused suppression (editors fade it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from lsprotocol import types

from gpulint.face.lsp.positions import Place
from gpulint.model import Finding
from gpulint.report.sarif import help_uri

SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "info": types.DiagnosticSeverity.Information}
# the rules that report a suppression comment which silences nothing
UNNECESSARY = frozenset({"GL002"})


def uri_of(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()


def diagnostic(finding: Finding, place: Place, place_of: Callable[[str], Place | None]) -> types.Diagnostic:
    """`place_of(path)` gives another file's positions (None: not readable, its positions are
    passed on as gpulint counts them)."""
    related = []
    for r in finding.related:
        other = place_of(os.path.abspath(r.path))
        start = other.position(r.line, r.column) if other is not None else \
            types.Position(line=max(0, r.line - 1), character=max(0, r.column - 1))
        related.append(types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri_of(r.path), range=types.Range(start=start, end=start)),
            message=r.message))
    return types.Diagnostic(
        range=place.range(finding.span),
        severity=SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=help_uri(finding.code)),
        source="gpulint",
        message=finding.message,
        related_information=related or None,
        tags=[types.DiagnosticTag.Unnecessary] if finding.code in UNNECESSARY else None,
    )
